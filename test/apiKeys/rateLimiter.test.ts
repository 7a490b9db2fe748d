import { sql, type KyselyPlugin } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRateLimiter, type RateLimitSettings } from '../../src/core/apiKeys/rateLimiter.js';
import type { Database } from '../../src/store/database.js';
import { disposeTestDatabase, openTestDatabase, testDatabaseKinds } from '../helpers/db.js';

/** Counts the statements that reach the database (a real kysely plugin on the real database). */
function statementCounter(): KyselyPlugin & { count: number } {
  return {
    count: 0,
    transformQuery(args) {
      this.count += 1;
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
}

// One long window, so a test never straddles a boundary; per-minute limits are per window here.
const settings: RateLimitSettings = { enabled: true, windowSeconds: 60, anonymousPerMinute: 1, keyPerMinute: 1 };
const log = pino({ level: 'silent' });
/** A clock fixed just after a window starts, moved by the tests. */
let clock = 0;
const now = () => clock;

describe.each(testDatabaseKinds)('rate limiter leases (%s)', (kind) => {
  let database: Database;
  beforeAll(async () => {
    database = await openTestDatabase(kind);
  }, 120_000);
  afterAll(async () => {
    await disposeTestDatabase(database);
  });

  const counted = async (bucket: string) =>
    Number(
      (
        await sql<{ count: number }>`select count from rate_limit_counters where bucket = ${bucket}`.execute(
          database.db,
        )
      ).rows[0]?.count ?? 0,
    );

  it('admits exactly the limit of a busy bucket with far fewer statements than requests', async () => {
    clock = 120_000_000;
    const counter = statementCounter();
    const limiter = createRateLimiter({ db: database.db.withPlugin(counter), now, log }, settings);
    const decisions: boolean[] = [];
    // 3,000 requests, 16 at a time, 0.2 ms apart: a busy client against a limit of 2,000.
    for (let i = 0; i < 3000; i += 16) {
      const batch = await Promise.all(Array.from({ length: 16 }, () => limiter.consume('ip:busy', 2000)));
      decisions.push(...batch.map((d) => d.allowed));
      clock += 3;
    }
    expect(decisions.filter(Boolean)).toHaveLength(2000);
    // Everything after the limit is refused; nothing before it is.
    expect(decisions.indexOf(false)).toBe(2000);
    // One statement per request would be 2,000; per burst of 16, 125. Leases of ~50 ms of traffic take ~25.
    expect(counter.count).toBeLessThan(40);
    expect(await counted('ip:busy')).toBeGreaterThanOrEqual(2000);
    await limiter.close();
  });

  it('counts a quiet bucket one request at a time, so two instances share its limit exactly', async () => {
    clock = 240_000_000;
    const first = createRateLimiter({ db: database.db, now, log }, settings);
    const second = createRateLimiter({ db: database.db, now, log }, settings);
    const decisions: boolean[] = [];
    for (let i = 0; i < 8; i++) {
      clock += 200;
      decisions.push((await (i % 2 === 0 ? first : second).consume('ip:quiet', 5)).allowed);
    }
    expect(decisions).toEqual([true, true, true, true, true, false, false, false]);
  });

  it('never admits more than the limit across instances under concurrency', async () => {
    clock = 360_000_000;
    const limiters = [0, 1, 2].map(() => createRateLimiter({ db: database.db, now, log }, settings));
    const decisions = await Promise.all(
      Array.from({ length: 900 }, (_, i) => limiters[i % 3]!.consume('ip:shared', 500)),
    );
    const admitted = decisions.filter((d) => d.allowed).length;
    expect(admitted).toBeLessThanOrEqual(500);
    // Leases left unused by one instance are the only shortfall, each a quarter of the headroom at most.
    expect(admitted).toBeGreaterThan(400);
  });

  it('starts a new count in the next window', async () => {
    clock = 480_000_000;
    const limiter = createRateLimiter({ db: database.db, now, log }, settings);
    expect((await limiter.consume('ip:windows', 1)).allowed).toBe(true);
    const refused = await limiter.consume('ip:windows', 1);
    expect(refused).toMatchObject({ allowed: false, limit: 1, retryAfterSeconds: 60 });
    clock += 60_000;
    expect((await limiter.consume('ip:windows', 1)).allowed).toBe(true);
  });
});
