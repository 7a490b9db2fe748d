import type { Kysely } from 'kysely';
import { insertRequests, type InsertRequestParameters } from './requests.repository.js';
import type { Tables } from './tables.js';

/** Stores new requests (quotes) with group commit. */
export interface RequestWriter {
  /** Resolves once the request is committed; rejects with the database's error if it could not be. */
  insert(params: InsertRequestParameters): Promise<void>;
}

/**
 * Group commit for the quote path: inserts that arrive while a write is in flight are queued and written
 * together by the next statement (at most `maxBatch` rows), so a burst of quotes costs a few commits instead
 * of one each. Every caller still waits for its own row to be committed before answering, so a quote is
 * never returned for a request that is not stored. When a batch fails, its rows are retried one by one, so
 * one bad row (a duplicate id) fails only its own quote.
 */
export function createRequestWriter(db: Kysely<Tables>, { maxBatch = 256 }: { maxBatch?: number } = {}): RequestWriter {
  interface Pending {
    params: InsertRequestParameters;
    resolve: () => void;
    reject: (error: unknown) => void;
  }
  const queue: Pending[] = [];
  let draining = false;

  async function drain(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.splice(0, maxBatch);
      try {
        await insertRequests(
          db,
          batch.map((entry) => entry.params),
        );
        for (const entry of batch) entry.resolve();
      } catch (error) {
        if (batch.length === 1) batch[0]!.reject(error);
        else
          await Promise.all(batch.map((entry) => insertRequests(db, [entry.params]).then(entry.resolve, entry.reject)));
      }
    }
    draining = false;
  }

  return {
    insert(params) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ params, resolve, reject });
        if (!draining) {
          draining = true;
          // Let the quotes being computed in this turn of the event loop join the first batch.
          setImmediate(() => void drain());
        }
      });
    },
  };
}
