import type { Address } from 'viem';
import type { ChainClients } from '../chain/clients.js';
import { checkApprovals, checkChain, checkPriceFeeds, type ChainFinding } from '../chain/startupChecks.js';
import type { ChainConfig } from '../core/chains/types.js';
import type { ChainStatus } from '../core/chains/chainStatus.js';
import type { Logger } from '../core/logger.js';
import { createPeriodicJob, type PeriodicJob } from '../core/periodicJob.js';
import type { ReadinessCheck } from '../rest/context.js';

/** How often approvals and price feeds are checked again while the gateway runs. */
export const CHAIN_CHECK_INTERVAL_MS = 60_000;

/** Every start-up check of every chain, once: what `npm run doctor` prints and the gateway starts from. */
export async function runChainChecks(
  chains: readonly ChainConfig[],
  clients: ChainClients,
  solver: Address,
): Promise<{ findings: ChainFinding[]; unreachable: number[] }> {
  const results = await Promise.all(
    chains.map(async (chain) => {
      const client = clients.get(chain.id);
      if (client === undefined) return { chainId: chain.id, reachable: false, findings: [] };
      const identity = await checkChain(chain, client, solver);
      // Approvals and feeds of another network, or of contracts that are not there, say nothing.
      if (!identity.reachable || identity.findings.length > 0) return { chainId: chain.id, ...identity };
      const [approvals, prices] = await Promise.all([
        checkApprovals(chain, client, solver),
        checkPriceFeeds(chain, client),
      ]);
      return { chainId: chain.id, reachable: true, findings: [...approvals, ...prices] };
    }),
  );
  return {
    findings: results.flatMap((result) => result.findings),
    unreachable: results.filter((result) => !result.reachable).map((result) => result.chainId),
  };
}

export interface ChainChecks extends ChainStatus {
  /**
   * Checks every chain before the solver starts. A chain-level finding (another network behind the RPC,
   * contracts without code or not owned by the solver) takes the chain out of service for this run: the
   * operator fixes the configuration or the key and restarts. A chain that did not answer is checked again
   * with the approvals and feeds, periodically.
   */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Whether the solver follows this chain (its watchers run, its sender recovers). */
  served(chainId: number): boolean;
  /** Runs the periodic checks now (tests; an operator's fix is otherwise seen within the interval). */
  recheck(): Promise<void>;
  /**
   * Takes a chain out of service for this run for a reason found while the gateway runs (the solver key used by
   * another gateway: `src/chain/keyWatch.ts`, which logs it); its deposits stop being followed (`onChainBlocked`).
   */
  block(chainId: number, reason: string): void;
  /** The findings as `/ready` checks: `solver:<chain>`, `approval:<chain>:<symbol>`, `price:<chain>:<symbol>`. */
  readiness(): Record<string, ReadinessCheck>;
}

export interface CreateChainChecksParameters {
  chains: readonly ChainConfig[];
  clients: ChainClients;
  solver: Address;
  log: Pick<Logger, 'warn' | 'error' | 'info'>;
  intervalMs?: number;
  /** Called when a chain is taken out of service after the solver started (it did not answer at start). */
  onChainBlocked?: (chainId: number) => void;
}

export function createChainChecks(params: CreateChainChecksParameters): ChainChecks {
  const { chains, clients, solver, log } = params;
  const blocked = new Map<number, string>();
  /** Chains whose chain-level check has not run yet (their RPC did not answer). */
  const unchecked = new Set<number>(chains.map((chain) => chain.id));
  let tokenFindings: ChainFinding[] = [];
  let priceFindings: ChainFinding[] = [];
  const job: PeriodicJob<void> = createPeriodicJob(params.intervalMs ?? CHAIN_CHECK_INTERVAL_MS, () => pass());
  /** Whether the first pass (before the solver starts) has ended. */
  let started = false;
  const reported = new Set<string>();

  function logOnce(finding: ChainFinding): void {
    const key = `${finding.kind}:${finding.message}`;
    if (reported.has(key)) return;
    reported.add(key);
    if (finding.kind === 'chain')
      log.error({ chainId: finding.chainId }, `chain ${finding.chainId} is out of service: ${finding.message}`);
    else log.warn({ chainId: finding.chainId }, finding.message);
  }

  async function pass(): Promise<void> {
    const results = await Promise.all(
      chains.map(async (chain) => {
        const client = clients.get(chain.id);
        if (client === undefined || blocked.has(chain.id)) return [];
        if (unchecked.has(chain.id)) {
          const identity = await checkChain(chain, client, solver);
          if (!identity.reachable) return [];
          unchecked.delete(chain.id);
          if (identity.findings.length > 0) {
            blocked.set(chain.id, identity.findings.map((finding) => finding.message).join('; '));
            identity.findings.forEach(logOnce);
            if (started) params.onChainBlocked?.(chain.id);
            return [];
          }
        }
        const [approvals, prices] = await Promise.all([
          checkApprovals(chain, client, solver),
          checkPriceFeeds(chain, client),
        ]);
        return [...approvals, ...prices];
      }),
    );
    const findings = results.flat();
    findings.forEach(logOnce);
    const fixed = [...tokenFindings, ...priceFindings].filter(
      (old) => !findings.some((finding) => finding.message === old.message),
    );
    for (const finding of fixed) {
      reported.delete(`${finding.kind}:${finding.message}`);
      log.info({ chainId: finding.chainId }, `start-up check passes again on chain ${finding.chainId}`);
    }
    tokenFindings = findings.filter((finding) => finding.kind === 'approval');
    priceFindings = findings.filter((finding) => finding.kind === 'price');
  }

  return {
    async start() {
      await job.start();
      started = true;
    },
    stop: () => job.stop(),
    served: (chainId) => !blocked.has(chainId),
    recheck: () => job.runNow(),
    block(chainId, reason) {
      if (blocked.has(chainId)) return;
      blocked.set(chainId, reason);
      params.onChainBlocked?.(chainId);
    },
    chainBlocked: (chainId) => blocked.get(chainId) ?? null,
    tokenBlocked(chainId, token) {
      const finding = tokenFindings.find(
        (candidate) =>
          candidate.kind === 'approval' &&
          candidate.chainId === chainId &&
          candidate.token.toLowerCase() === token.toLowerCase(),
      );
      return finding?.message ?? null;
    },
    readiness() {
      const checks: Record<string, ReadinessCheck> = {};
      for (const [chainId, reason] of blocked)
        checks[`solver:${chainId}`] = {
          ok: false,
          message: `the solver does not serve chain ${chainId}: ${reason}. Fix it and restart the gateway (npm run doctor lists what to fix)`,
        };
      for (const finding of [...tokenFindings, ...priceFindings]) {
        const key = `${finding.kind}:${finding.chainId}:${finding.kind === 'chain' ? '' : finding.symbol}`;
        checks[key] = { ok: false, message: finding.message };
      }
      return checks;
    },
  };
}
