/** What the context carries of webhooks: their delivery policy and the key that seals the signing secrets. */

/** Delivery policy of webhooks (`GatewayConfig.webhooks`). */
export interface WebhookSettings {
  /** Allow URLs on private and loopback addresses (devnet, tests). Default false; the devnet sets it. */
  allowPrivate: boolean;
  /** Seals and opens the keys' signing secrets (see `apiKeys/webhookSecret.ts`). */
  encryptionKey: WebhookEncryptionKey;
  /** Timeout of one attempt (connect to end of answer). Default 5000. */
  timeoutMs: number;
  /** Retries after the first attempt (the reference's 10). */
  maxRetries: number;
  /** Wait before retry n (1-based) is `retryBaseMs * 2^(n-1)`, at most `retryMaxMs`. Defaults 1000 and 600000. */
  retryBaseMs: number;
  retryMaxMs: number;
  /**
   * Look for due deliveries at least this often (other instances' work, lost wake-ups). Default 1000. Between
   * polls the dispatcher also wakes at the earliest due time it knows: its own retries, and the earliest pending
   * delivery read at start and whenever a known due time is reached (an earlier run's retries and leases).
   */
  pollIntervalMs: number;
  /** Attempts in flight at once per instance. Default 16. */
  concurrency: number;
  /**
   * Attempts in flight at once per API key and instance, so that one key's slow receiver cannot take every slot
   * and starve the other keys' deliveries. Default 4.
   */
  perKeyConcurrency: number;
  /** Finished deliveries (and their logs) are deleted this long after they finished. Default 30 days. */
  retentionMs: number;
  /** How often an instance deletes finished deliveries past `retentionMs`. Default one hour. */
  pruneIntervalMs: number;
}

/** 32 bytes of key material: `GATEWAY_WEBHOOK_SECRET_KEY`, or derived from the solver key when that is unset. */
export type WebhookEncryptionKey = Buffer;
