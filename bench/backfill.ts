/**
 * `npx tsx bench/backfill.ts [--rows 100000]`: how long the backfill of the per-request filter values
 * (`2026_12_01_1000_backfill_request_filter_columns`) takes at start-up on a table an older gateway wrote. Fills a
 * fresh database (PGlite in memory, or a fresh schema of `DATABASE_URL`) with `--rows` successful requests, each
 * with its claimed deposit and its `success` event, 1 in 10 with app fees, the three columns empty; then times the
 * migration's `up` (its three statements) and checks every row was filled. Everything it made is dropped at the end.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { createDatabase } from '../src/store/database.js';
import { up as backfill } from '../src/store/migrations/2026_12_01_1000_backfill_request_filter_columns.js';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rows: { type: 'string', default: '100000' } } });
  const rows = Number(values.rows);
  if (!Number.isSafeInteger(rows) || rows < 1) throw new Error('--rows must be a positive integer');
  const url = process.env.DATABASE_URL;
  const schema = url === undefined ? undefined : `bench_backfill_${randomBytes(4).toString('hex')}`;
  const database = await createDatabase(url === undefined ? {} : { databaseUrl: url, schema });
  try {
    await database.migrate();
    const { db } = database;
    const hex64 = (salt: string) => sql.raw(`'0x' || md5('${salt}' || g) || md5('${salt}2' || g)`);
    const address = sql.raw(`'0x' || lpad(to_hex(65536 + g % 20000), 40, '0')`);
    const started = Date.now();
    await sql`insert into requests (id, status, user_address, recipient, refund_to, sender, origin_chain_id,
        destination_chain_id, origin_currency, destination_currency, amount_in, amount_out, min_amount_out,
        trade_type, operation, order_id, quote, fees_quoted, expires_at, created_at, updated_at)
      select ${hex64('id')}, 'success', ${address}, ${address}, ${address}, ${address}, 1, 10,
        '0x0000000000000000000000000000000000000000', '0x0000000000000000000000000000000000000000',
        1000000, 990000, 980000, 'EXACT_INPUT', 'bridge', ${hex64('order')}, '{}'::jsonb,
        case when g % 10 = 0
          then jsonb_build_object('appFees', jsonb_build_array(jsonb_build_object('bps', '10')),
            'usdMicros', jsonb_build_object('app', (g % 1000000)::text))
          else jsonb_build_object('appFees', '[]'::jsonb, 'usdMicros', jsonb_build_object('app', '0')) end,
        1800000000000, 1700000000000 + g * 1000, 1700000000000 + g * 1000
      from generate_series(1, ${rows}) as g`.execute(db);
    await sql`insert into deposits (chain_id, tx_hash, log_index, block_number, block_hash, request_id, depositor,
        token, amount, status, created_at, updated_at)
      select 1, ${hex64('tx')}, 0, g, ${hex64('block')}, ${hex64('id')}, ${address},
        '0x0000000000000000000000000000000000000000', 1000000, 'consumed',
        1700000000000 + g * 1000, 1700000000000 + g * 1000
      from generate_series(1, ${rows}) as g`.execute(db);
    await sql`update requests set deposit_id = d.id from deposits as d where d.request_id = requests.id`.execute(db);
    await sql`insert into request_events (request_id, status, payload, created_at)
      select id, 'success', '{}'::jsonb, created_at + 2000 + (created_at / 1000) % 60000 from requests`.execute(db);
    await sql`analyze`.execute(db);
    console.log(`filled ${rows.toLocaleString('en')} requests in ${((Date.now() - started) / 1000).toFixed(1)} s`);

    const timed = Date.now();
    await backfill(db);
    const seconds = (Date.now() - timed) / 1000;
    const { rows: counted } = await sql<{ blocks: string; fills: string; fees: string }>`select
        count(origin_block) as blocks, count(fill_time_ms) as fills, count(app_fees_usd_micros) as fees
      from requests`.execute(db);
    const { blocks, fills, fees } = counted[0]!;
    console.log(
      `backfill: ${seconds.toFixed(2)} s on ${database.dialect} (${blocks} blocks, ${fills} fill times, ${fees} app fees)`,
    );
    if (Number(blocks) !== rows || Number(fills) !== rows || Number(fees) !== Math.floor(rows / 10)) {
      throw new Error('the backfill left rows empty');
    }
  } finally {
    if (schema !== undefined) await database.dropSchema();
    await database.close();
  }
}

await main();
