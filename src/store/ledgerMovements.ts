/**
 * What the ledger stores: movements, each written as two rows of `ledger_entries` (`ledger.repository.ts`), and the
 * names of the accounts they move between. The rules that decide which movements an event books are the core's
 * (`src/core/ledger/movements.ts`); the store writes what it is handed, in the transaction of the change that
 * causes it, and reads the accounts back.
 */
export type LedgerAccount = string;

/** The accounts of the ledger (described with the rules, `src/core/ledger/movements.ts`). */
export const accounts = {
  solver: 'solver',
  depository: 'depository',
  depositoryUnallocated: 'depository:unallocated',
  counterparty: 'counterparty',
  trade: 'trade',
  sponsor: 'sponsor',
  gas: 'expense:gas',
  opening: 'equity:opening',
  reorgLoss: 'loss:reorg',
  revenue: (kind: 'execution' | 'swap' | 'platform' | 'refund' | 'claim') => `revenue:${kind}`,
  app: (wallet: string) => `app:${wallet.toLowerCase()}`,
} as const;

export type MovementKind =
  | 'deposit_received'
  | 'deposit_lost'
  | 'fill_paid'
  | 'exchange'
  | 'fee_earned'
  | 'app_fee_accrued'
  | 'sponsored'
  | 'refund_paid'
  | 'refund_kept'
  | 'gas_spent'
  | 'settlement'
  | 'app_fee_claimed'
  | 'claim_paid'
  | 'swap_back'
  | 'opening';

/** One movement: `amount` moves into `debit` from `credit`, on one chain in one currency. */
export interface LedgerMovement {
  /** Unique per movement: the same event always produces the same key. */
  key: string;
  kind: MovementKind;
  chainId: number;
  /** Token address, lower case; the zero address for the native currency. */
  currency: string;
  /** Smallest units, > 0 (an `opening` may be 0: it still records that the opening was taken). */
  amount: bigint;
  debit: LedgerAccount;
  credit: LedgerAccount;
  /** USD value when recorded (micro-USD), or null when no price was at hand. */
  usdMicros: bigint | null;
  requestId: string | null;
}
