import { sql, type Kysely } from 'kysely';
import { toBigInt, toNumber } from './mappers.js';
import type { Tables } from './tables.js';

/** One fill of the solver: its destination chain, when it was recorded, and the USD value of its output when quoted. */
export interface FillOutflow {
  requestId: string;
  chainId: number;
  createdAt: number;
  usdMicros: bigint;
}

/**
 * The solver's fills recorded since `since` (Unix ms) that can have moved money: prepared, broadcast or mined
 * successfully (a reverted or replaced fill delivered nothing). Their value is the quoted output's USD value
 * (`fees_quoted.usdMicros.out`), the same measure the quote path checks against the outflow limit.
 */
export async function listFillOutflow(db: Kysely<Tables>, since: number): Promise<FillOutflow[]> {
  const rows = await db
    .selectFrom('outgoing_txs as o')
    .innerJoin('requests as r', 'r.id', 'o.request_id')
    .select([
      'o.request_id as requestId',
      'o.chain_id as chainId',
      'o.created_at as createdAt',
      sql<string | null>`r.fees_quoted -> 'usdMicros' ->> 'out'`.as('usd'),
    ])
    .where('o.kind', '=', 'fill')
    .where('o.status', 'in', ['prepared', 'broadcast', 'confirmed'])
    .where('o.created_at', '>=', since)
    .execute();
  return rows.map((row) => ({
    requestId: row.requestId,
    chainId: toNumber(row.chainId),
    createdAt: toNumber(row.createdAt),
    usdMicros: row.usd === null ? 0n : toBigInt(row.usd),
  }));
}
