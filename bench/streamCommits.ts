/**
 * On PostgreSQL, a second clock for `npm run bench:stream`: when each status change was visibly committed. A
 * connection of this process LISTENs on the outbox's channel (`request_events`, which every status change
 * notifies at commit) and, at each notification of the gateway's schema, reads the events it has not seen yet;
 * the moment that read returns is an upper bound of their commit (they are in its snapshot), normally within a
 * millisecond or two of it. With `updatedAt` (a lower bound) it brackets the commit. PGlite lives inside the
 * gateway process: nothing outside can see its commits, so there is no such clock there.
 */
import pg from 'pg';
import { readEventNotification } from '../src/store/requestEvents.repository.js';

const CHANNEL = 'request_events';
const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

export interface CommitObserver {
  /** The schema whose outbox is followed. */
  schema: string;
  /** `Date.now()` when the change of `requestId` to `status` was first seen committed, or undefined. */
  seenAt: (requestId: string, status: string) => number | undefined;
  /** Reads that failed (the figures are then incomplete). */
  readonly errors: string[];
  close(): Promise<void>;
}

/** Starts following the outbox of `schema` (the gateway's `GATEWAY_DATABASE_SCHEMA`, else the default schema). */
export async function observeCommits(databaseUrl: string, schema: string | undefined): Promise<CommitObserver> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 10_000 });
  await client.connect();
  const followed =
    schema ?? String((await client.query<{ schema: string }>('select current_schema() as schema')).rows[0]?.schema);
  if (!SCHEMA_PATTERN.test(followed)) throw new Error(`unexpected schema name ${JSON.stringify(followed)}`);
  const table = `"${followed}".request_events`;
  const seen = new Map<string, number>();
  const errors: string[] = [];
  let last = Number(
    (await client.query<{ id: string | null }>(`select max(id)::text as id from ${table}`)).rows[0]?.id ?? 0,
  );
  let reading = false;
  let again = false;

  const read = async (): Promise<void> => {
    if (reading) return void (again = true);
    reading = true;
    try {
      do {
        again = false;
        const { rows } = await client.query<{ id: string; request_id: string; status: string }>(
          `select id::text as id, request_id, status from ${table} where id > $1 order by id`,
          [last],
        );
        const at = Date.now();
        for (const row of rows) {
          last = Math.max(last, Number(row.id));
          const key = `${row.request_id.toLowerCase()} ${row.status}`;
          if (!seen.has(key)) seen.set(key, at);
        }
      } while (again);
    } catch (error) {
      errors.push((error as Error).message);
    } finally {
      reading = false;
    }
  };
  client.on('notification', (message) => {
    if (message.channel === CHANNEL && readEventNotification(message.payload ?? '').schema === followed) void read();
  });
  client.on('error', (error) => errors.push(error.message));
  await client.query(`LISTEN ${CHANNEL}`);
  return {
    schema: followed,
    seenAt: (requestId, status) => seen.get(`${requestId.toLowerCase()} ${status}`),
    errors,
    close: () => client.end().catch(() => undefined),
  };
}
