import type { Kysely } from 'kysely';
import type { Tables } from '../../store/tables.js';
import {
  claimDueWebhookDeliveries,
  nextWebhookAttemptAt,
  deleteFinishedWebhookDeliveries,
  recordWebhookAttempt,
  type ClaimedWebhookAttempt,
} from '../../store/webhookDeliveries.repository.js';
import type { WebhookDeliveryStatus } from '../../records/webhookDelivery.js';
import type { Logger } from '../logger.js';
import type { GatewayMetrics } from '../metrics.js';
import { postWebhook, type PostWebhookResult } from './postWebhook.js';
import { reservedHeader, signatureHeader, signatureTimestampHeader, signWebhook } from './signature.js';
import { webhookBodyText } from './webhookPayload.js';
import { openWebhookSecret } from '../apiKeys/webhookSecret.js';
import type { WebhookSettings } from '../ports/webhookSettings.js';
import { checkWebhookUrl } from './webhookUrl.js';

export const defaultWebhookSettings: Omit<WebhookSettings, 'encryptionKey' | 'allowPrivate'> = {
  timeoutMs: 5_000,
  maxRetries: 10,
  retryBaseMs: 1_000,
  retryMaxMs: 600_000,
  pollIntervalMs: 1_000,
  concurrency: 16,
  perKeyConcurrency: 4,
  retentionMs: 30 * 24 * 3_600_000,
  pruneIntervalMs: 3_600_000,
};

/** Finished deliveries deleted per statement when pruning. */
const PRUNE_BATCH = 1_000;

export interface CreateWebhookDispatcherParameters {
  db: Kysely<Tables>;
  log: Logger;
  now: () => number;
  settings: WebhookSettings;
  /**
   * Subscribes to wake-ups from other instances and from commits (PostgreSQL LISTEN on
   * `webhookNotifyChannel`); returns an unsubscribe. Absent: wake-ups come from `wake()` and the poll only.
   */
  subscribe?: (wake: () => void) => Promise<() => Promise<void>>;
  /** Counts each recorded attempt by outcome (`/metrics`). */
  metrics?: Pick<GatewayMetrics, 'webhookAttempt'>;
}

export interface WebhookDispatcher {
  /** Start claiming and posting due deliveries. */
  start(): Promise<void>;
  /** Look for due deliveries now (call after committing a status change). */
  wake: () => void;
  /** Stop claiming, wait for the attempts in flight to be recorded, release the subscription. Safe twice. */
  stop(): Promise<void>;
}

/** Wait before retry `retry` (1-based). */
const retryDelay = (settings: Pick<WebhookSettings, 'retryBaseMs' | 'retryMaxMs'>, retry: number): number =>
  Math.min(settings.retryBaseMs * 2 ** (retry - 1), settings.retryMaxMs);

/**
 * Posts webhook deliveries from the outbox (`webhook_deliveries`). Each attempt is claimed in the database
 * first (`claimDueWebhookDeliveries`: one instance per attempt, even with several gateways on one PostgreSQL),
 * then posted, then recorded; a non-2xx answer or a timeout is retried with exponential backoff until
 * `maxRetries` retries have failed. Deliveries survive restarts: a stopped dispatcher finishes its attempts in
 * flight, and one that died leaves a lease that expires, after which the attempt is made again. Finished
 * deliveries, the delivery log, are kept for `retentionMs` and then deleted (at start and every `pruneIntervalMs`).
 */
export function createWebhookDispatcher(params: CreateWebhookDispatcherParameters): WebhookDispatcher {
  const { db, log, now, settings } = params;
  // Long enough that a live attempt always records before another instance may take the delivery over.
  const leaseMs = settings.timeoutMs + 30_000;
  const inFlight = new Set<Promise<void>>();
  /** Attempts in flight by API key id (only keys with at least one). */
  const inFlightByKey = new Map<string, number>();
  let running = false;
  let stopping = false;
  let pumping = false;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let nextDue = Infinity;
  /** Whether the next due time was read from the database since start. */
  let dueRead = false;
  let unsubscribe: (() => Promise<void>) | undefined;
  let stopped: Promise<void> | undefined;
  let pruneTimer: NodeJS.Timeout | undefined;
  let pruning: Promise<void> = Promise.resolve();

  /** Deletes finished deliveries past the retention, a batch at a time (every instance may; deleting is idempotent). */
  async function prune(): Promise<void> {
    let deleted = 0;
    try {
      for (;;) {
        const batch = await deleteFinishedWebhookDeliveries(db, {
          before: now() - settings.retentionMs,
          limit: PRUNE_BATCH,
        });
        deleted += batch;
        if (batch < PRUNE_BATCH || stopping) break;
      }
    } catch (error) {
      log.warn({ err: error }, 'webhook: deleting old deliveries failed');
    }
    if (deleted > 0)
      log.info(
        { deleted, retentionMs: settings.retentionMs },
        'webhook: deleted finished deliveries past their retention',
      );
  }

  function schedule(): void {
    if (!running || stopping) return;
    clearTimeout(timer);
    const delay = Math.max(0, Math.min(settings.pollIntervalMs, nextDue - now()));
    timer = setTimeout(wake, delay);
  }

  function wake(): void {
    if (!running || stopping) return;
    if (pumping) {
      again = true;
      return;
    }
    pumping = true;
    void pump().finally(() => {
      pumping = false;
      if (again) wake();
      else schedule();
    });
  }

  async function pump(): Promise<void> {
    do {
      again = false;
      const room = settings.concurrency - inFlight.size;
      if (room <= 0 || stopping) return;
      let claimed: ClaimedWebhookAttempt[];
      const claimedAt = now();
      try {
        claimed = await claimDueWebhookDeliveries(db, {
          now: claimedAt,
          limit: room,
          leaseMs,
          perKeyLimit: settings.perKeyConcurrency,
          busy: inFlightByKey,
        });
      } catch (error) {
        log.warn({ err: error }, 'webhook: claiming due deliveries failed');
        return;
      }
      if (nextDue <= claimedAt || !dueRead) {
        // What is due next, from the database: an earlier run's retries and leases are known only there. One due
        // now and not claimed waits for a slot (an attempt in flight ends and wakes the dispatcher).
        dueRead = true;
        let read = Infinity;
        try {
          read = (await nextWebhookAttemptAt(db, claimedAt)) ?? Infinity;
        } catch (error) {
          log.warn({ err: error }, 'webhook: reading the next due delivery failed');
        }
        // A retry recorded during the read set `nextDue` itself: keep the earlier of the two (an older, past value
        // was the one just reached).
        nextDue = Math.min(read, nextDue > claimedAt ? nextDue : Infinity);
      }
      let filledKey = false;
      for (const attempt of claimed) {
        const key = attempt.delivery.apiKeyId;
        const count = (inFlightByKey.get(key) ?? 0) + 1;
        inFlightByKey.set(key, count);
        if (count >= settings.perKeyConcurrency) filledKey = true;
        track(key, deliver(attempt));
      }
      // A key that reached its limit may have hidden other keys' due deliveries from this claim: claim again
      // without it.
      if (claimed.length === room || (claimed.length > 0 && filledKey)) again = true;
    } while (again && !stopping);
  }

  function track(key: string, work: Promise<void>): void {
    inFlight.add(work);
    void work.finally(() => {
      inFlight.delete(work);
      const left = (inFlightByKey.get(key) ?? 1) - 1;
      if (left > 0) inFlightByKey.set(key, left);
      else inFlightByKey.delete(key);
      wake();
    });
  }

  async function deliver(claim: ClaimedWebhookAttempt): Promise<void> {
    const { delivery } = claim;
    const attempt = delivery.attempts;
    const at = now();
    let result: PostWebhookResult;
    let status: WebhookDeliveryStatus;
    let nextAttemptAt = at;
    const refusal = whyNot(claim);
    if (refusal !== null) {
      result = { statusCode: null, error: refusal, durationMs: 0 };
      status = 'cancelled';
      // A dropped delivery is a receiver that silently misses an event: say so where an operator looks.
      log.warn(
        { requestId: delivery.requestId, deliveryId: delivery.id, apiKeyId: delivery.apiKeyId, reason: refusal },
        `webhook: delivery dropped: ${refusal}`,
      );
    } else {
      result = await post(claim);
      const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
      if (ok) status = 'delivered';
      else if (attempt > settings.maxRetries) status = 'failed';
      else {
        status = 'pending';
        nextAttemptAt = now() + retryDelay(settings, attempt);
        nextDue = Math.min(nextDue, nextAttemptAt);
      }
    }
    try {
      const applied = await recordWebhookAttempt(db, {
        id: delivery.id,
        attempt: { attempt, at, durationMs: result.durationMs, statusCode: result.statusCode, error: result.error },
        status,
        nextAttemptAt,
        now: now(),
      });
      if (applied) params.metrics?.webhookAttempt(status === 'pending' ? 'retry' : status);
      if (!applied)
        log.warn(
          { requestId: delivery.requestId, deliveryId: delivery.id, attempt },
          'webhook: attempt outlived its lease; not recorded',
        );
      else if (status === 'failed')
        log.warn(
          { requestId: delivery.requestId, deliveryId: delivery.id, apiKeyId: delivery.apiKeyId },
          'webhook: delivery failed for good',
        );
    } catch (error) {
      // The lease runs out and the attempt is made again: at least once.
      log.error(
        { err: error, requestId: delivery.requestId, deliveryId: delivery.id },
        'webhook: recording an attempt failed',
      );
    }
  }

  /**
   * Why a claimed delivery cannot or need not be made, or null. A signing secret that does not open is a
   * configuration problem no retry cures (another webhook encryption key): the delivery is dropped, and can be
   * replayed once the configuration is right.
   */
  function whyNot(claim: ClaimedWebhookAttempt): string | null {
    if (claim.revoked) return 'the API key is revoked';
    if (claim.webhook === null || !claim.webhook.enabled) return 'the webhook is disabled';
    if (claim.sealedSecret === null) return 'the API key keeps no signing secret (rotate the key to seal one)';
    try {
      openWebhookSecret(settings.encryptionKey, claim.delivery.apiKeyId, claim.sealedSecret);
    } catch (error) {
      return `${(error as Error).message} (GATEWAY_WEBHOOK_SECRET_KEY or the solver key changed?)`;
    }
    return null;
  }

  async function post(claim: ClaimedWebhookAttempt): Promise<PostWebhookResult> {
    const webhook = claim.webhook!;
    let url: URL;
    let secret: string;
    try {
      url = checkWebhookUrl(webhook.url, { allowPrivate: settings.allowPrivate });
      secret = openWebhookSecret(settings.encryptionKey, claim.delivery.apiKeyId, claim.sealedSecret!);
    } catch (error) {
      return { statusCode: null, error: (error as Error).message, durationMs: 0 };
    }
    const body = webhookBodyText(claim.event.payload, claim.event.createdAt);
    const timestamp = String(now());
    const custom = Object.fromEntries(Object.entries(webhook.headers ?? {}).filter(([name]) => !reservedHeader(name)));
    return postWebhook({
      url,
      body,
      headers: {
        ...custom,
        [signatureTimestampHeader]: timestamp,
        [signatureHeader]: signWebhook(secret, timestamp, body),
      },
      timeoutMs: settings.timeoutMs,
      allowPrivate: settings.allowPrivate,
    });
  }

  return {
    async start() {
      if (running) return;
      running = true;
      if (params.subscribe !== undefined) unsubscribe = await params.subscribe(wake);
      wake();
      pruning = prune();
      pruneTimer = setInterval(() => {
        pruning = pruning.then(prune);
      }, settings.pruneIntervalMs);
      pruneTimer.unref();
    },
    wake,
    stop() {
      stopped ??= (async () => {
        stopping = true;
        clearTimeout(timer);
        clearInterval(pruneTimer);
        await unsubscribe?.();
        await pruning;
        while (pumping || inFlight.size > 0) {
          await Promise.allSettled([...inFlight]);
          if (pumping) await new Promise((resolve) => setTimeout(resolve, 5));
        }
        running = false;
      })();
      return stopped;
    },
  };
}
