import type { ColumnType } from 'kysely';
import type { JsonObject, JsonValue } from '../records/json.js';

/**
 * Table types of the gateway's database, as kysely sees them.
 *
 * Column types describe what the drivers really return, not what we would like: `pg` returns int8 and numeric
 * as strings, PGlite returns int8 as a number (or a bigint beyond 2^53) and numeric as a string. Repositories
 * never leak these: their row mappers convert with `toBigInt` / `toNumber` (see `mappers.ts`).
 */

/** int8 / bigint column: read as whatever the driver returns, written as a number, bigint or decimal string. */
export type Int8 = ColumnType<string | number | bigint, number | bigint | string, number | bigint | string>;
/** Nullable int8. */
export type NullableInt8 = ColumnType<
  string | number | bigint | null,
  number | bigint | string | null | undefined,
  number | bigint | string | null
>;
/** bigserial primary key: generated on insert. */
export type Serial = ColumnType<string | number | bigint, never, never>;
/** numeric(78,0) amount (fits any uint256): read as a decimal string, written as one. */
export type Uint256 = ColumnType<string, string, string>;
/** jsonb: read parsed, written as JSON text (so arrays never reach pg's array serializer). */
export type Jsonb<T extends JsonValue = JsonValue> = ColumnType<T, string, string>;
/** jsonb with a database default. */
export type JsonbWithDefault<T extends JsonValue = JsonValue> = ColumnType<T, string | undefined, string>;

export interface RequestsTable {
  id: string;
  status: string;
  user_address: string;
  recipient: string;
  refund_to: string;
  sender: string;
  origin_chain_id: Int8;
  destination_chain_id: Int8;
  origin_currency: string;
  destination_currency: string;
  amount_in: Uint256;
  amount_out: Uint256;
  min_amount_out: Uint256;
  trade_type: string;
  operation: string;
  order_id: string;
  referrer: string | null;
  api_key_id: string | null;
  quote: Jsonb;
  fees_quoted: Jsonb;
  fees_actual: Jsonb | null;
  fail_reason: string | null;
  refund_fail_reason: string | null;
  details: Jsonb | null;
  in_tx_hashes: JsonbWithDefault<string[]>;
  tx_hashes: JsonbWithDefault<string[]>;
  deposit_address: string | null;
  expires_at: Int8;
  created_at: Int8;
  updated_at: Int8;
  volume_usd_micros: ColumnType<string, string | undefined, string>;
  fast_fill_api_key_id: ColumnType<string | null, string | null | undefined, string | null>;
  fast_fill_usd_micros: ColumnType<string | null, string | null | undefined, string | null>;
  /** The sponsored USD value a sponsored quote reserved against its key's allowance, micro-USD; null: not sponsored. */
  sponsorship_usd_micros: ColumnType<string | null, string | null | undefined, string | null>;
  /** Where that reservation stands: `reserved`, `released` or `drawn` (`sponsorshipReservations.ts`); null: none. */
  sponsorship_state: ColumnType<string | null, string | null | undefined, string | null>;
  /** The `deposits` row that paid the request (its claim, or its attachment to a fast fill); null before that. */
  deposit_id: NullableInt8;
  /** The origin-chain block of the claimed deposit; null before a claim. */
  origin_block: NullableInt8;
  /** Milliseconds from the claimed deposit's sighting to the fill's success; null without both. */
  fill_time_ms: NullableInt8;
  /** The quote's app fees in micro-USD; null when it has none. */
  app_fees_usd_micros: ColumnType<string | null, string | null | undefined, string | null>;
  /**
   * What the request's fill will take from the solver on the destination, as the core decided it
   * (`committedOutflow.repository.ts`): `[{ currency, amount }]`, lower-case addresses, decimal strings.
   */
  committed_outflow: Jsonb<Array<{ currency: string; amount: string }>>;
  /** How many times the row was written since its insert: every update raises it by one (a trigger). */
  version: ColumnType<string | number, never, never>;
}

export interface RequestEventsTable {
  id: Serial;
  request_id: string;
  status: string;
  payload: Jsonb;
  created_at: Int8;
}

export interface ChainCursorsTable {
  chain_id: Int8;
  name: string;
  block_number: Int8;
  block_hash: string;
  updated_at: Int8;
}

/** The solver's transaction count the database knows to be all its own, per chain and signer (`solverNonces.repository.ts`). */
export interface SolverNoncesTable {
  chain_id: Int8;
  signer: string;
  nonce: Int8;
  updated_at: Int8;
}

/** The genesis block hash of each followed chain (`chainGenesis.repository.ts`). */
export interface ChainGenesisTable {
  chain_id: Int8;
  genesis_hash: string;
  recorded_at: Int8;
}

export interface DepositsTable {
  id: Serial;
  chain_id: Int8;
  tx_hash: string;
  log_index: number;
  block_number: Int8;
  block_hash: string;
  request_id: string;
  depositor: string;
  token: string;
  amount: Uint256;
  deposit_index: ColumnType<string | null, string | null | undefined, string | null>;
  /** The deposit transaction's `from` (null: recorded before migration 0400). */
  sender: ColumnType<string | null, string | null | undefined, string | null>;
  /** The solver's own transaction that carried the deposit, when it sent it (`src/core/solver/solverCarrier.ts`). */
  carrier: ColumnType<string | null, string | null | undefined, string | null>;
  status: string;
  /** Unix ms: a reorg took the deposit off the chain after it was used (status `removed`); null otherwise. */
  reorged_at: NullableInt8;
  created_at: Int8;
  updated_at: Int8;
}

export interface OutgoingTxsTable {
  id: Serial;
  chain_id: Int8;
  request_id: string;
  kind: string;
  signer: string;
  nonce: NullableInt8;
  status: string;
  hashes: JsonbWithDefault<string[]>;
  payload: Jsonb;
  created_at: Int8;
  updated_at: Int8;
}

export interface ApiKeysTable {
  id: string;
  name: string;
  key_hash: string;
  sponsorship_enabled: boolean;
  limits: Jsonb;
  webhook: Jsonb | null;
  created_at: Int8;
  revoked_at: NullableInt8;
  business_verified: ColumnType<boolean, boolean | undefined, boolean>;
  payout_address: string | null;
  /** The API key sealed with the webhook encryption key (the HMAC secret of its webhooks); null when not kept. */
  webhook_secret: ColumnType<string | null, string | null | undefined, string | null>;
  /** Fee sponsorship the administrator allows the key, micro-USD (migration 1400; default 0). */
  sponsorship_allowance_usd_micros: ColumnType<string, string | undefined, string>;
  /** Fee sponsorship the key has drawn, micro-USD (gasless batches with `subsidizeFees`). */
  sponsorship_spent_usd_micros: ColumnType<string, string | undefined, string>;
  /** Fee sponsorship the key's open sponsored quotes hold, micro-USD (migration 1100 of 2026-11-29). */
  sponsorship_reserved_usd_micros: ColumnType<string, string | undefined, string>;
}

export interface WebhookDeliveriesTable {
  id: Serial;
  api_key_id: string;
  request_id: string;
  event_id: Int8;
  replay_of: NullableInt8;
  status: ColumnType<string, string | undefined, string>;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Int8;
  log: JsonbWithDefault<JsonValue[]>;
  created_at: Int8;
  updated_at: Int8;
  finished_at: NullableInt8;
}

export interface LedgerEntriesTable {
  id: Serial;
  movement_key: string;
  kind: string;
  account: string;
  chain_id: Int8;
  currency: string;
  /** Signed numeric(78,0): read as a decimal string, written as one. */
  amount: string;
  usd_micros: string | null;
  request_id: string | null;
  created_at: Int8;
}

export interface LedgerReconciliationsTable {
  chain_id: Int8;
  currency: string;
  block_number: Int8;
  /** numeric(78,0) (the signed ones may be negative), read and written as decimal strings. */
  on_chain: string;
  ledger: string;
  incoming: string;
  drift: string;
  checked_at: Int8;
  in_flight_at: NullableInt8;
}

export interface SettlementItemsTable {
  deposit_id: Int8;
  batch_key: string;
  chain_id: Int8;
  status: string;
  /** Why a `rejected` item's release is refused (`SettlementRejection`); null otherwise. */
  reason: ColumnType<string | null, string | null | undefined, string | null>;
  /** The decoded revert of a rejected item. */
  detail: ColumnType<string | null, string | null | undefined, string | null>;
  /** The release's transaction when the settler learnt it from the chain, not from its own batch; null otherwise. */
  release_tx_hash: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Int8;
  updated_at: Int8;
}

export interface AppFeeClaimsTable {
  id: string;
  seq: Serial;
  wallet: string;
  recipient: string;
  chain_id: Int8;
  currency: string;
  usd_micros: Uint256;
  fee_usd_micros: Uint256;
  amount: Uint256;
  message: string;
  status: string;
  tx_hash: string | null;
  expires_at: Int8;
  created_at: Int8;
  updated_at: Int8;
}

export interface PermitsTable {
  request_id: string;
  chain_id: Int8;
  kind: string;
  signature: string;
  call: Jsonb;
  status: string;
  /** The permit's signer, lower case; null on rows accepted before it was recorded. */
  owner: string | null;
  created_at: Int8;
  updated_at: Int8;
}

export interface PermitDeadlinesTable {
  chain_id: Int8;
  token: string;
  owner: string;
  nonce: string;
  deadline: Int8;
  request_id: string;
}

/** A solver transaction a requester made revert on chain (`src/store/executionReverts.repository.ts`). */
export interface ExecutionRevertsTable {
  chain_id: Int8;
  tx_hash: string;
  /** `fill` (a fill running a call quote's calls) or `gasless` (a gasless batch). */
  kind: string;
  request_id: string;
  user_address: string;
  api_key_id: string | null;
  created_at: Int8;
}

/** The database as kysely sees it. */
export interface DepositAddressesTable {
  chain_id: Int8;
  address: string;
  type: string;
  salt_key: string;
  recovery_address: string | null;
  request_id: string;
  currency: string;
  refund_to: string | null;
  params: Jsonb<JsonObject>;
  created_at: Int8;
  reindexed_at: NullableInt8;
}

export interface DepositAddressTransfersTable {
  id: Serial;
  chain_id: Int8;
  address: string;
  tx_hash: string;
  log_index: number;
  block_number: Int8;
  block_hash: string;
  token: string;
  amount: Uint256;
  depositor: string;
  status: string;
  request_id: ColumnType<string | null, string | null | undefined, string | null>;
  supersedes_request_id: ColumnType<string | null, string | null | undefined, string | null>;
  sweep_id: ColumnType<string | null, string | null | undefined, string | null>;
  legs: ColumnType<JsonValue | null, string | null | undefined, string | null>;
  /** A `dust` transfer taken along by a later transfer's sweep: that sweep's id. */
  dust_sweep_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Int8;
  updated_at: Int8;
}

export interface Tables {
  requests: RequestsTable;
  request_events: RequestEventsTable;
  chain_cursors: ChainCursorsTable;
  solver_nonces: SolverNoncesTable;
  chain_genesis: ChainGenesisTable;
  deposits: DepositsTable;
  outgoing_txs: OutgoingTxsTable;
  api_keys: ApiKeysTable;
  webhook_deliveries: WebhookDeliveriesTable;
  ledger_entries: LedgerEntriesTable;
  ledger_reconciliations: LedgerReconciliationsTable;
  settlement_items: SettlementItemsTable;
  app_fee_claims: AppFeeClaimsTable;
  permits: PermitsTable;
  permit_deadlines: PermitDeadlinesTable;
  execution_reverts: ExecutionRevertsTable;
  deposit_addresses: DepositAddressesTable;
  deposit_address_transfers: DepositAddressTransfersTable;
}
