import { sql, type Kysely } from 'kysely';
import type { Tables } from './tables.js';

/**
 * The solver's transaction count on `chainId` that this database accounts for: one past the highest nonce it
 * recorded in `outgoing_txs`, or the count it stored after a start or a rebuild (`recordSolverNonce`), whichever is
 * higher. 0 for a database that knows nothing of the chain.
 */
export async function knownSolverNonce(db: Kysely<Tables>, chainId: number, signer: string): Promise<bigint> {
  const row = await db
    .selectNoFrom((eb) => [
      eb
        .selectFrom('outgoing_txs')
        .select(sql<string | null>`max(nonce) + 1`.as('next'))
        .where('chain_id', '=', chainId)
        .where('signer', '=', signer.toLowerCase())
        .as('sent'),
      eb
        .selectFrom('solver_nonces')
        .select('nonce')
        .where('chain_id', '=', chainId)
        .where('signer', '=', signer.toLowerCase())
        .as('stored'),
    ])
    .executeTakeFirstOrThrow();
  const sent = row.sent === null ? 0n : BigInt(row.sent);
  const stored = row.stored === null ? 0n : BigInt(row.stored);
  return sent > stored ? sent : stored;
}

/** Stores `nonce` as accounted for on `chainId` (never lowering what is stored). */
export async function recordSolverNonce(
  db: Kysely<Tables>,
  params: { chainId: number; signer: string; nonce: bigint; now: number },
): Promise<void> {
  await db
    .insertInto('solver_nonces')
    .values({
      chain_id: params.chainId,
      signer: params.signer.toLowerCase(),
      nonce: params.nonce,
      updated_at: params.now,
    })
    .onConflict((oc) =>
      oc.columns(['chain_id', 'signer']).doUpdateSet({
        nonce: sql`greatest(solver_nonces.nonce, excluded.nonce)`,
        updated_at: (eb) => eb.ref('excluded.updated_at'),
      }),
    )
    .execute();
}
