import { sql, type Kysely } from 'kysely';
import { toBigInt, toNumber } from './mappers.js';
import type { Tables } from './tables.js';

/** How much one destination currency was bought through the gateway in a window. */
export interface CurrencyBuyActivity {
  chainId: number;
  /** Lower case; the zero address is the native currency. */
  address: string;
  /** Requests filled with this currency as the output. */
  buyCount: number;
  /** Their inputs' USD value at quote time, micro-USD. */
  buyUsdMicros: bigint;
}

/**
 * Filled requests (`success`) created since `since` (Unix ms), grouped by destination currency: what the
 * gateway's users bought. Backs `GET /currencies/trending`.
 */
export async function listCurrencyBuyActivity(
  db: Kysely<Tables>,
  params: { since: number; chainId?: number },
): Promise<CurrencyBuyActivity[]> {
  let query = db
    .selectFrom('requests')
    .select(['destination_chain_id', 'destination_currency'])
    .select((eb) => [
      eb.fn.countAll<string>().as('buy_count'),
      sql<string>`sum(volume_usd_micros)`.as('buy_usd_micros'),
    ])
    .where('status', '=', 'success')
    .where('created_at', '>=', params.since);
  if (params.chainId !== undefined) query = query.where('destination_chain_id', '=', params.chainId);
  const rows = await query.groupBy(['destination_chain_id', 'destination_currency']).execute();
  return rows.map((row) => ({
    chainId: toNumber(row.destination_chain_id),
    address: row.destination_currency,
    buyCount: toNumber(row.buy_count),
    buyUsdMicros: toBigInt(row.buy_usd_micros ?? '0'),
  }));
}
