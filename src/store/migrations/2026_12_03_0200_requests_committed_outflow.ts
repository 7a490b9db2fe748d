import { sql, type Kysely } from 'kysely';

/** How the rows name a chain's native currency (`requests.destination_currency`, the DEX leg's `nativeIn`). */
const NATIVE = '0x0000000000000000000000000000000000000000';

/**
 * `requests.committed_outflow`: what a request's fill will take from the solver on its destination chain, as
 * `[{ "currency": "0x…", "amount": "123" }]` (lower-case addresses, decimal strings). The core decides it when it
 * stores the request (`committedOutflow` in `src/core/fill/fillOutflow.ts`, the rule the fill itself spends by)
 * and rewrites it when the output changes; the inventory's committed figure is the plain sum of these lines over
 * the requests in flight (`sumCommittedFills`), so the store holds no rule of its own about it.
 *
 * The rows stored before the column existed are filled here from their quote JSON, by the rule the core applies
 * (and `sumCommittedFills` applied in SQL until now), so an older database keeps its committed figures: that rule
 * written in SQL belongs to this one-off backfill only. A fill whose quote has a DEX destination leg
 * (`quote.dex.destination`) takes the leg's entry currency (native when `nativeIn`) and `amountIn`, any other its
 * output (`destination_currency`, `amount_out`); a gas top-up (`quote.gasTopup.amount`) adds native; one line per
 * currency. Every row is written once, in one statement (the migrations run in one transaction before the gateway
 * serves), and the column is then required: every insert gives it.
 *
 * `ANALYZE` gathers no statistics on it, as on the table's other documents (`2026_11_28_0200`): no statement
 * filters, joins or orders on it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table requests add column committed_outflow jsonb`.execute(db);
  const leg = sql`r.quote -> 'dex' -> 'destination'`;
  const paidCurrency = sql`case when ${leg} is null then r.destination_currency
    when (${leg} ->> 'nativeIn') = 'true' then ${sql.lit(NATIVE)} else lower(${leg} ->> 'tokenIn') end`;
  const paidAmount = sql`coalesce((${leg} ->> 'amountIn')::numeric, r.amount_out)`;
  const topup = sql`(r.quote -> 'gasTopup' ->> 'amount')::numeric`;
  await sql`with lines as (
      select id, currency, sum(amount) as amount, min(position) as position from (
        select r.id, ${paidCurrency} as currency, ${paidAmount} as amount, 0 as position from requests as r
        union all
        select r.id, ${sql.lit(NATIVE)}, ${topup}, 1 from requests as r where r.quote ? 'gasTopup' and ${topup} > 0
      ) as line
      group by id, currency
    ),
    outflows as (
      select id, jsonb_agg(jsonb_build_object('currency', currency, 'amount', trunc(amount)::text) order by position)
        as outflow
      from lines group by id
    )
    update requests set committed_outflow = outflows.outflow from outflows where outflows.id = requests.id`.execute(db);
  await sql`alter table requests alter column committed_outflow set not null`.execute(db);
  await sql`alter table requests alter column committed_outflow set statistics 0`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table requests drop column committed_outflow`.execute(db);
}
