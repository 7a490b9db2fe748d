import type { Logger } from '../logger.js';

export interface ServiceSkips {
  /**
   * Whether the job leaves `chainId` alone this pass: true while the chain is out of service. The first skip of a
   * chain is logged, and so is the first pass that finds it back in service; nothing in between.
   */
  skip(chainId: number): boolean;
}

/**
 * A background job's view of the chains the solver serves (settlement, claim payouts, reconciliation). A chain out
 * of service (a start-up check failed, or another gateway uses the solver key there: `src/server/chainChecks.ts`,
 * `src/chain/keyWatch.ts`) gets no transaction and no read from the job: its sender is stopped or its RPC answers
 * for something else, so each pass would fail there and log it. The job skips it quietly and picks it up again
 * when it is back.
 */
export function createServiceSkips(params: {
  /** The job's name as the log line starts it ("settlement"). */
  job: string;
  /** Whether the chain is in service now; all are when absent. */
  inService: ((chainId: number) => boolean) | undefined;
  /** Why the chain is out of service, for the log line (`ChainStatus.chainBlocked`), when known. */
  reason?: ((chainId: number) => string | null) | undefined;
  log: Pick<Logger, 'warn' | 'info'>;
}): ServiceSkips {
  const skipping = new Set<number>();
  return {
    skip(chainId) {
      if (params.inService?.(chainId) ?? true) {
        if (skipping.delete(chainId))
          params.log.info({ chainId }, `${params.job}: chain ${chainId} is in service again; resumed there`);
        return false;
      }
      if (!skipping.has(chainId)) {
        skipping.add(chainId);
        const reason = params.reason?.(chainId) ?? null;
        params.log.warn(
          { chainId, ...(reason === null ? {} : { reason }) },
          `${params.job}: chain ${chainId} is out of service; skipped there until it is back`,
        );
      }
      return true;
    },
  };
}
