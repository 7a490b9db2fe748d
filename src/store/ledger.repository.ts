import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { LedgerMovement } from './ledgerMovements.js';
import { normalizeHex, toBigInt, toNumber } from './mappers.js';
import type { Tables } from './tables.js';

/**
 * The ledger's storage: append-only rows, two per movement (see `ledgerMovements.ts`). The movements come from the
 * core's rules (`src/core/ledger/movements.ts`); writers run in the transaction of the status change that causes
 * them: in its statement (`updateRequestStatus`: a fill's `success`, through `ledgerInsertWhen`;
 * `confirmDepositsAtBlocks`, through `ledgerEntryRows`) or beside it (`updateDepositStatus`: a deposit confirmed,
 * `updateOutgoingTx`: a transaction mined, its gas, a refund, a settlement), so the change and its entries commit
 * together or not at all.
 */

/**
 * Appends movements; one already written (same key) is skipped, so a retry or a recovery that repeats a status
 * change cannot double an entry. Both rows of a movement go in one statement.
 */
export async function insertLedgerMovements(
  db: Kysely<Tables>,
  movements: readonly LedgerMovement[],
  now: number,
): Promise<number> {
  const rows = ledgerEntryRows(movements, now);
  if (rows.length === 0) return 0;
  const result = await db
    .insertInto('ledger_entries')
    .values(rows)
    .onConflict((oc) => oc.columns(['movement_key', 'account']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) / 2;
}

/**
 * `insertLedgerMovements` as the body of a CTE of another statement, writing only when `when` (SQL over that
 * statement's CTEs) holds: the movements of a change commit in the change's own statement. `movements` is not
 * empty.
 */
export function ledgerInsertWhen(movements: readonly LedgerMovement[], now: number, when: RawBuilder<unknown>) {
  const rows = ledgerEntryRows(movements, now);
  if (rows.length === 0) throw new RangeError('ledgerInsertWhen: no movement');
  return sql`insert into ledger_entries
      (movement_key, kind, account, chain_id, currency, amount, usd_micros, request_id, created_at)
    select entry.movement_key, entry.kind, entry.account, entry.chain_id, entry.currency, entry.amount,
      entry.usd_micros, entry.request_id, ${now}::bigint
    from (values ${sql.join(
      rows.map(
        (row) => sql`(${row.movement_key}::text, ${row.kind}::text, ${row.account}::text, ${row.chain_id}::bigint,
          ${row.currency}::text, ${row.amount}::numeric, ${row.usd_micros}::numeric, ${row.request_id}::text)`,
      ),
    )}) as entry (movement_key, kind, account, chain_id, currency, amount, usd_micros, request_id)
    where ${when}
    on conflict (movement_key, account) do nothing`;
}

/** The two rows of each movement (debit, then credit), checked: what `insertLedgerMovements` inserts. */
export function ledgerEntryRows(movements: readonly LedgerMovement[], now: number): LedgerEntryRow[] {
  return movements.flatMap((movement) => {
    if (movement.amount < 0n || (movement.amount === 0n && movement.kind !== 'opening'))
      throw new RangeError(`ledger movement ${movement.key} has a non-positive amount`);
    if (movement.debit === movement.credit)
      throw new RangeError(`ledger movement ${movement.key} debits and credits one account`);
    const common = {
      movement_key: movement.key,
      kind: movement.kind,
      chain_id: movement.chainId,
      currency: normalizeHex(movement.currency),
      request_id: movement.requestId === null ? null : normalizeHex(movement.requestId),
      created_at: now,
    };
    const usd = movement.usdMicros;
    return [
      {
        ...common,
        account: movement.debit,
        amount: movement.amount.toString(),
        usd_micros: usd === null ? null : usd.toString(),
      },
      {
        ...common,
        account: movement.credit,
        amount: (-movement.amount).toString(),
        usd_micros: usd === null ? null : (-usd).toString(),
      },
    ];
  });
}

/** One row of `ledger_entries` as written. */
export interface LedgerEntryRow {
  movement_key: string;
  kind: string;
  account: string;
  chain_id: number;
  currency: string;
  amount: string;
  usd_micros: string | null;
  request_id: string | null;
  created_at: number;
}

export interface LedgerEntry {
  id: number;
  movementKey: string;
  kind: string;
  account: string;
  chainId: number;
  currency: string;
  /** Signed: positive debits the account. */
  amount: bigint;
  usdMicros: bigint | null;
  requestId: string | null;
  createdAt: number;
}

export interface ListLedgerEntriesFilters {
  requestId?: string;
  account?: string;
}

/** Entries in the order written, optionally for one request or one account. */
export async function listLedgerEntries(
  db: Kysely<Tables>,
  filters: ListLedgerEntriesFilters = {},
): Promise<LedgerEntry[]> {
  let query = db.selectFrom('ledger_entries').selectAll().orderBy('id', 'asc');
  if (filters.requestId !== undefined) query = query.where('request_id', '=', normalizeHex(filters.requestId));
  if (filters.account !== undefined) query = query.where('account', '=', filters.account);
  const rows = await query.execute();
  return rows.map((row) => ({
    id: toNumber(row.id),
    movementKey: row.movement_key,
    kind: row.kind,
    account: row.account,
    chainId: toNumber(row.chain_id),
    currency: row.currency,
    amount: toBigInt(row.amount),
    usdMicros: row.usd_micros === null ? null : toBigInt(row.usd_micros),
    requestId: row.request_id,
    createdAt: toNumber(row.created_at),
  }));
}

export interface LedgerBalance {
  account: string;
  chainId: number;
  currency: string;
  /** Signed sum of the account's entries. */
  amount: bigint;
}

/** Each account's balance per chain and currency (accounts starting with `accountPrefix`, when given). */
export async function ledgerBalances(
  db: Kysely<Tables>,
  params: { accountPrefix?: string } = {},
): Promise<LedgerBalance[]> {
  let query = db
    .selectFrom('ledger_entries')
    .select(['account', 'chain_id', 'currency', sql<string>`sum(amount)::text`.as('amount')])
    .groupBy(['account', 'chain_id', 'currency'])
    .orderBy('account')
    .orderBy('chain_id')
    .orderBy('currency');
  if (params.accountPrefix !== undefined)
    query = query.where('account', 'like', `${params.accountPrefix.replace(/[\\%_]/g, '\\$&')}%`);
  const rows = await query.execute();
  return rows.map((row) => ({
    account: row.account,
    chainId: toNumber(row.chain_id),
    currency: row.currency,
    amount: toBigInt(row.amount),
  }));
}

/**
 * The ledger's invariant, checked: every (chain, currency) whose entries do not sum to zero, and every movement
 * that is not exactly two opposite entries (in amount and in USD value: both valued, opposite, or neither).
 * Empty when the ledger balances.
 */
export async function ledgerImbalances(
  db: Kysely<Tables>,
): Promise<{ currencies: Array<{ chainId: number; currency: string; sum: bigint }>; movements: string[] }> {
  const currencies = await db
    .selectFrom('ledger_entries')
    .select(['chain_id', 'currency', sql<string>`sum(amount)::text`.as('sum')])
    .groupBy(['chain_id', 'currency'])
    .having(sql<boolean>`sum(amount) <> 0`)
    .execute();
  const movements = await db
    .selectFrom('ledger_entries')
    .select('movement_key')
    .groupBy('movement_key')
    .having(
      sql<boolean>`count(*) <> 2 or sum(amount) <> 0 or count(distinct chain_id) <> 1 or count(distinct currency) <> 1 or count(usd_micros) = 1 or coalesce(sum(usd_micros), 0) <> 0`,
    )
    .execute();
  return {
    currencies: currencies.map((row) => ({
      chainId: toNumber(row.chain_id),
      currency: row.currency,
      sum: toBigInt(row.sum),
    })),
    movements: movements.map((row) => row.movement_key),
  };
}

/**
 * What an account is owed per chain and currency (the negated sum of its entries: a liability is a credit),
 * with the USD value of those entries when they were written. Backs the app-fee balances of a wallet.
 */
export async function accountOwed(
  db: Kysely<Tables>,
  account: string,
): Promise<Array<{ chainId: number; currency: string; amount: bigint; usdMicros: bigint }>> {
  const rows = await db
    .selectFrom('ledger_entries')
    .select([
      'chain_id',
      'currency',
      sql<string>`(-sum(amount))::text`.as('amount'),
      sql<string>`(-coalesce(sum(usd_micros), 0))::text`.as('usd'),
    ])
    .where('account', '=', account)
    .groupBy(['chain_id', 'currency'])
    .orderBy('chain_id')
    .orderBy('currency')
    .execute();
  return rows.map((row) => ({
    chainId: toNumber(row.chain_id),
    currency: row.currency,
    amount: toBigInt(row.amount),
    usdMicros: toBigInt(row.usd),
  }));
}
