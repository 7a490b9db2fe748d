import type pg from 'pg';

export interface ListenParameters {
  /** A `postgres://` URL: LISTEN needs a connection of its own, outside the pool. */
  databaseUrl: string;
  /** The channel, a plain SQL identifier (a constant of the caller, never user input). */
  channel: string;
  /** Each notification's payload on `channel`. */
  onNotification: (payload: string) => void;
  /**
   * After each connection, the first and every reconnection, has started listening. Notifications sent while
   * no connection listened are lost: this is the caller's cue to catch up (poll once).
   */
  onListening?: () => void;
  /** A lost connection, or a reconnection that failed; either way another is tried `retryMs` later. */
  onError: (error: Error | undefined) => void;
  /** Default 1 000. */
  retryMs?: number;
}

/**
 * PostgreSQL LISTEN on a dedicated connection that reconnects by itself: the one way the gateway follows commits
 * of other transactions (the request-event outbox, enqueued webhook deliveries). The first connection must
 * succeed (its failure rejects); after that a lost connection is reopened every `retryMs` until it works, one
 * attempt at a time, and the callers' polls cover the gap. Resolves to a function that stops it for good.
 */
export async function listenWithReconnect(params: ListenParameters): Promise<() => Promise<void>> {
  // Loaded only here: a gateway on PGlite never needs the driver.
  const { default: pgModule } = await import('pg');
  const retryMs = params.retryMs ?? 1_000;
  let stopped = false;
  let current: pg.Client | null = null;
  let retry: NodeJS.Timeout | null = null;

  async function connect(): Promise<void> {
    const client = new pgModule.Client({ connectionString: params.databaseUrl, connectionTimeoutMillis: 10_000 });
    const lost = (error?: Error): void => {
      if (current !== client) return;
      current = null;
      client.end().catch(() => undefined);
      if (stopped) return;
      params.onError(error);
      scheduleRetry();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (message) => {
      if (message.channel === params.channel) params.onNotification(message.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${params.channel}`);
    } catch (error) {
      client.end().catch(() => undefined);
      throw error;
    }
    if (stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    current = client;
    params.onListening?.();
  }

  function scheduleRetry(): void {
    if (stopped || retry !== null) return;
    retry = setTimeout(() => {
      retry = null;
      connect().catch((error: unknown) => {
        params.onError(error instanceof Error ? error : new Error(String(error)));
        scheduleRetry();
      });
    }, retryMs);
    retry.unref();
  }

  await connect();
  return async () => {
    stopped = true;
    if (retry !== null) clearTimeout(retry);
    const client = current;
    current = null;
    await client?.end().catch(() => undefined);
  };
}
