import { deletePassedPermitDeadlines } from '../../store/permitDeadlines.repository.js';
import { deleteExpiredUnpaidRequests } from '../../store/requests.repository.js';
import { releaseExpiredSponsorships } from '../../store/sponsorshipReservations.js';
import type { CoreContext } from '../context.js';

export interface RequestRetentionSettings {
  /**
   * How long a never-paid request is kept after its refund window ends (its `expiresAt` plus the quote
   * settings' `refundWindowSeconds`), in ms.
   */
  retentionMs: number;
  /** How often the job runs, in ms. */
  intervalMs: number;
  /** Most rows one DELETE removes; a run repeats batches until fewer are left. */
  batchSize: number;
}

export const defaultRequestRetentionSettings: RequestRetentionSettings = {
  retentionMs: 7 * 86_400_000,
  intervalMs: 600_000,
  batchSize: 500,
};

export interface RequestRetention {
  /** Deletes every never-paid request past its retention now, batch by batch; resolves with the number deleted. */
  runOnce(): Promise<number>;
  start(): void;
  /** Stops the timer and waits for a running pass. */
  stop(): Promise<void>;
}

/**
 * Removes requests that were never paid (quote traffic) once their refund window and the retention are over,
 * so storage does not grow with quotes nobody pays. Only `waiting` requests with nothing attached (no deposit,
 * event, transaction, ledger entry or webhook delivery) go. A deposit that still arrives for a deleted request
 * loses nothing: the solver refunds a deposit for an unknown request to its depositor. Each pass first gives back
 * the sponsorship that sponsored quotes reserved and that expired unpaid, and drops the quoted EIP-2612 permit
 * deadlines that have passed.
 */
export function createRequestRetention(
  ctx: Pick<CoreContext, 'db' | 'log' | 'now' | 'config'>,
  settings: RequestRetentionSettings,
): RequestRetention {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;
  let started = false;
  let halted = false;

  const pass = async (): Promise<number> => {
    // Sponsorship reserved by quotes that expired unpaid goes back to their keys at once (the solver fills nothing
    // past its expiry); the requests themselves stay for their refund window and the retention.
    for (;;) {
      const released = await releaseExpiredSponsorships(ctx.db, {
        expiredBefore: ctx.now(),
        limit: settings.batchSize,
      });
      if (released > 0) ctx.log.info({ released }, 'retention: released the sponsorship of expired quotes');
      if (released < settings.batchSize || halted) break;
    }
    const expiredBefore = ctx.now() - ctx.config.quote.refundWindowSeconds * 1000 - settings.retentionMs;
    let total = 0;
    for (;;) {
      const deleted = await deleteExpiredUnpaidRequests(ctx.db, { expiredBefore, limit: settings.batchSize });
      total += deleted;
      if (deleted < settings.batchSize || halted) break;
    }
    if (total > 0) ctx.log.info({ deleted: total }, 'retention: removed never-paid requests');
    // A quoted EIP-2612 deadline only keeps later quotes off it until it passes (src/core/permits/deadlines.ts).
    await deletePassedPermitDeadlines(ctx.db, Math.floor(ctx.now() / 1000));
    return total;
  };

  const runOnce = (): Promise<number> => {
    running ??= pass().finally(() => {
      running = undefined;
    });
    return running;
  };

  const schedule = () => {
    timer = setTimeout(() => {
      runOnce()
        .catch((error: unknown) =>
          ctx.log.warn({ err: error }, 'retention: removing never-paid requests failed; retried at the next run'),
        )
        .finally(() => {
          if (started) schedule();
        });
    }, settings.intervalMs);
    timer.unref();
  };

  return {
    runOnce,
    start() {
      if (started) return;
      started = true;
      halted = false;
      schedule();
    },
    async stop() {
      started = false;
      halted = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      await running?.catch(() => undefined);
    },
  };
}
