import { sql, type Kysely } from 'kysely';

/**
 * The checks on `requests`' values move from the table to the columns' types. A table's CHECK constraint is read
 * from its stored text, planned and compiled again by every INSERT statement (`ExecRelCheck` builds them once per
 * statement), and a quote is one INSERT of one row: the six checks were ~11% of the PGlite worker's time per quote
 * (a `perf` profile of `npm run bench` at 1 client). A domain's checks are planned once per session and kept with
 * the type (`typcache`), so the same rules cost a compiled expression per column. The rules and the errors'
 * constraint names are the ones before; the values a column accepts are the same.
 *
 * The columns change to domains without constraints first, which is only a relabelling (no table rewrite); the
 * domains' checks are then added, which reads the table once to validate the stored rows. PostgreSQL rebuilds the
 * four partial indexes whose predicates name these columns (their text now reads `(status)::text`; the queries'
 * `status = 'waiting'` still matches them).
 */
const checks = [
  {
    domain: 'request_amount',
    base: 'numeric(78, 0)',
    columns: ['amount_in', 'amount_out', 'min_amount_out'],
    constraint: 'requests_amount_check',
    rule: sql`value >= 0`,
  },
  {
    domain: 'request_status',
    base: 'text',
    columns: ['status'],
    constraint: 'requests_status_check',
    rule: sql`value in ('waiting', 'depositing', 'pending', 'submitted', 'success', 'failure', 'refund', 'fallback')`,
  },
  {
    domain: 'request_trade_type',
    base: 'text',
    columns: ['trade_type'],
    constraint: 'requests_trade_type_check',
    rule: sql`value in ('EXACT_INPUT', 'EXPECTED_OUTPUT', 'EXACT_OUTPUT')`,
  },
  {
    domain: 'request_tx_hashes',
    base: 'jsonb',
    columns: ['in_tx_hashes', 'tx_hashes'],
    constraint: 'requests_hashes_are_arrays',
    rule: sql`jsonb_typeof(value) = 'array'`,
  },
] as const;

/** The table's checks as `2026_11_22_0300_create_requests` made them (kysely names a column's check `<table>_<column>_check`). */
const tableChecks = [
  ['requests_amount_in_check', sql`amount_in >= 0`],
  ['requests_amount_out_check', sql`amount_out >= 0`],
  ['requests_min_amount_out_check', sql`min_amount_out >= 0`],
  [
    'requests_status_check',
    sql`status in ('waiting', 'depositing', 'pending', 'submitted', 'success', 'failure', 'refund', 'fallback')`,
  ],
  ['requests_trade_type_check', sql`trade_type in ('EXACT_INPUT', 'EXPECTED_OUTPUT', 'EXACT_OUTPUT')`],
  ['requests_hashes_are_arrays', sql`jsonb_typeof(in_tx_hashes) = 'array' and jsonb_typeof(tx_hashes) = 'array'`],
] as const;

const columnTypes = (type: (check: (typeof checks)[number]) => string) =>
  sql.join(
    checks.flatMap((check) =>
      check.columns.map((column) => sql`alter column ${sql.ref(column)} type ${sql.raw(type(check))}`),
    ),
  );

export async function up(db: Kysely<any>): Promise<void> {
  for (const { domain, base } of checks) await sql`create domain ${sql.id(domain)} as ${sql.raw(base)}`.execute(db);
  await sql`alter table requests ${columnTypes((check) => check.domain)}`.execute(db);
  await sql`alter table requests ${sql.join(tableChecks.map(([name]) => sql`drop constraint ${sql.id(name)}`))}`.execute(
    db,
  );
  for (const { domain, constraint, rule } of checks) {
    await sql`alter domain ${sql.id(domain)} add constraint ${sql.id(constraint)} check (${rule})`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table requests ${columnTypes((check) => check.base)}`.execute(db);
  for (const { domain } of checks) await sql`drop domain ${sql.id(domain)}`.execute(db);
  await sql`alter table requests ${sql.join(
    tableChecks.map(([name, rule]) => sql`add constraint ${sql.id(name)} check (${rule})`),
  )}`.execute(db);
}
