/**
 * What each request's fill will take from the solver on its destination chain (`requests.committed_outflow`), as
 * the core decided it when it stored the request (`committedOutflow` in `src/core/fill/fillOutflow.ts`): written
 * with the request, rewritten by the core when the request's output changes (a gasless batch's origin gas), and
 * summed here over the requests in flight. The store only keeps and adds up the lines it is given.
 */
import { sql, type Kysely } from 'kysely';
import { normalizeHex, toJson, toNumber, toUint256 } from './mappers.js';
import type { Tables } from './tables.js';

/** One line of a request's committed outflow: an amount (smallest units) of a destination chain's currency. */
export interface CommittedOutflowLine {
  currency: string;
  amount: bigint;
}

/** The lines as the `committed_outflow` column's JSON text: `[{ "currency": "0x…", "amount": "123" }]`. */
export const committedOutflowJson = (lines: ReadonlyArray<CommittedOutflowLine>): string =>
  toJson(lines.map((line) => ({ currency: normalizeHex(line.currency), amount: toUint256(line.amount) })));

/** Replaces the committed outflow of a request (when its output changed). Returns whether the request exists. */
export async function setCommittedOutflow(
  db: Kysely<Tables>,
  id: string,
  lines: ReadonlyArray<CommittedOutflowLine>,
): Promise<boolean> {
  const result = await db
    .updateTable('requests')
    .set({ committed_outflow: committedOutflowJson(lines) })
    .where('id', '=', normalizeHex(id))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Per destination chain and currency: what fills in flight will take from the solver's wallet, the sum of the
 * committed outflows of the requests whose deposit is claimed or fill sent and not yet mined (`pending`, `submitted`).
 */
export async function sumCommittedFills(
  db: Kysely<Tables>,
): Promise<Array<{ chainId: number; currency: string; amount: bigint }>> {
  const { rows } = await sql<{ destination_chain_id: string | number; currency: string; amount: string }>`
    select r.destination_chain_id, line ->> 'currency' as currency, sum((line ->> 'amount')::numeric)::text as amount
    from requests as r cross join lateral jsonb_array_elements(r.committed_outflow) as line
    where r.status in ('pending', 'submitted')
    group by r.destination_chain_id, line ->> 'currency'`.execute(db);
  return rows.map((row) => ({
    chainId: toNumber(row.destination_chain_id),
    currency: row.currency,
    amount: BigInt(row.amount),
  }));
}
