/**
 * A transaction follower (`txFollower.ts`) in a process of its own, for the crash test in `follower.test.ts`: it
 * follows FOLLOWER_RPC_URL into the PostgreSQL schema FOLLOWER_SCHEMA (migrated by the test) and prints
 * `confirmed <hash>` for each transaction it confirms, until it is killed.
 */
import { createPublicClient, http } from 'viem';
import type { Logger } from '../../../src/core/logger.js';
import { createDatabase } from '../../../src/store/database.js';
import { createTxFollower } from './txFollower.js';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };

const database = await createDatabase({
  databaseUrl: process.env.FOLLOWER_DATABASE_URL!,
  schema: process.env.FOLLOWER_SCHEMA!,
});
const client = createPublicClient({ transport: http(process.env.FOLLOWER_RPC_URL) });
const follower = createTxFollower({
  client,
  db: database.db,
  log: quiet,
  chainId: Number(process.env.FOLLOWER_CHAIN_ID),
  confirmations: 2,
  // One block per range, so the kill lands in the middle of a backfill.
  maxBlockRange: 1n,
  onConfirmed: (tx) => process.stdout.write(`confirmed ${tx.txHash}\n`),
});
await follower.start();
process.stdout.write('following\n');
