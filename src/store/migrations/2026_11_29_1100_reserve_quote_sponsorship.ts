import { sql, type Kysely } from 'kysely';

/**
 * A sponsored quote reserves the USD value the sponsor pays against its API key's allowance when it is quoted:
 * `api_keys.sponsorship_reserved_usd_micros` is what the key's open sponsored requests hold, so what a key can still
 * sponsor is its allowance less what it spent and what it holds. Each sponsored request keeps its own reservation
 * (`requests.sponsorship_usd_micros`) and where it stands (`sponsorship_state`: `reserved` while the request may still
 * fill, `released` once it expired unpaid, failed or was refunded, `drawn` once it filled), so a release or a draw
 * happens once, in the statement or transaction of the change that causes it.
 *
 * Both are null on every request quoted without sponsorship, and the state is plain `text` without a check: a domain's
 * check would run on the null of every quote's INSERT (PostgreSQL coerces an omitted domain column's null to the
 * domain), and only the statements of `sponsorshipReservations.ts` and `insertSponsoredRequest` write it, from
 * literals. The partial index holds the open reservations only: the expiry sweep reads it, and a quote that is not
 * sponsored adds no entry to it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    .addColumn('sponsorship_reserved_usd_micros', 'numeric(78, 0)', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('api_keys')
    .addCheckConstraint('api_keys_sponsorship_reserved_nonnegative', sql`sponsorship_reserved_usd_micros >= 0`)
    .execute();
  await sql`alter table requests
    add column sponsorship_usd_micros numeric(78, 0),
    add column sponsorship_state text`.execute(db);
  await sql`create index requests_sponsorship_reserved_idx on requests (expires_at)
    where sponsorship_state = 'reserved'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index requests_sponsorship_reserved_idx`.execute(db);
  await sql`alter table requests drop column sponsorship_state, drop column sponsorship_usd_micros`.execute(db);
  await db.schema.alterTable('api_keys').dropConstraint('api_keys_sponsorship_reserved_nonnegative').execute();
  await db.schema.alterTable('api_keys').dropColumn('sponsorship_reserved_usd_micros').execute();
}
