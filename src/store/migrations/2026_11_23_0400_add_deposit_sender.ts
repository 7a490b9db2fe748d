import { type Kysely } from 'kysely';

/**
 * The sender of a deposit's transaction (`from`, read from the chain by the watcher), beside the `depositor` the
 * depository's caller names: the solver decides whether the order's own user sent a deposit from the sender,
 * never from a field the caller chooses. Null for deposits recorded before this column existed.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('deposits').addColumn('sender', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('deposits').dropColumn('sender').execute();
}
