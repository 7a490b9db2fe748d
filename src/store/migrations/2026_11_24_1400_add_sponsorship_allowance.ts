import { sql, type Kysely } from 'kysely';

/**
 * Metered fee sponsorship: each API key has a sponsorship allowance (micro-USD) set by the administrator and the
 * sponsorship it has spent (micro-USD). A gasless batch with `subsidizeFees` draws its origin gas from it in the
 * statement that checks it (`spent + cost <= allowance`), in the transaction that accepts the batch, so two
 * racing submissions cannot overdraw. Keys start with an allowance of 0: nothing is sponsored until it is set.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    .addColumn('sponsorship_allowance_usd_micros', 'numeric(78, 0)', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('api_keys')
    .addColumn('sponsorship_spent_usd_micros', 'numeric(78, 0)', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('api_keys')
    .addCheckConstraint(
      'api_keys_sponsorship_nonnegative',
      sql`sponsorship_allowance_usd_micros >= 0 and sponsorship_spent_usd_micros >= 0`,
    )
    .execute();
  // What a sponsored batch drew, so a batch that never reaches the chain gives it back.
  await db.schema
    .alterTable('gasless_submissions')
    .addColumn('sponsored_usd_micros', 'numeric(78, 0)', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('gasless_submissions').dropColumn('sponsored_usd_micros').execute();
  await db.schema.alterTable('api_keys').dropConstraint('api_keys_sponsorship_nonnegative').execute();
  await db.schema.alterTable('api_keys').dropColumn('sponsorship_spent_usd_micros').execute();
  await db.schema.alterTable('api_keys').dropColumn('sponsorship_allowance_usd_micros').execute();
}
