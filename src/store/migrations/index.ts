import type { Migration } from 'kysely/migration';
import * as createRequests from './2026_11_22_0300_create_requests.js';
import * as createRequestEvents from './2026_11_22_0301_create_request_events.js';
import * as createChainCursors from './2026_11_22_0302_create_chain_cursors.js';
import * as createDeposits from './2026_11_22_0303_create_deposits.js';
import * as createOutgoingTxs from './2026_11_22_0304_create_outgoing_txs.js';
import * as createApiKeys from './2026_11_22_0305_create_api_keys.js';
import * as addQuoteVolume from './2026_11_22_0306_add_quote_volume_and_revenue_share.js';
import * as addFastFill from './2026_11_22_0307_add_fast_fill.js';
import * as createRateLimitCounters from './2026_11_22_0308_create_rate_limit_counters.js';
import * as createWebhookDeliveries from './2026_11_22_0320_create_webhook_deliveries.js';
import * as lighterRequestInserts from './2026_11_22_0330_lighter_request_inserts.js';
import * as addDepositSender from './2026_11_23_0400_add_deposit_sender.js';
import * as createLedgerEntries from './2026_11_23_2330_create_ledger_entries.js';
import * as createSettlementItems from './2026_11_23_2331_create_settlement_items.js';
import * as createChainGenesis from './2026_11_24_0100_create_chain_genesis.js';
import * as createAppFeeClaims from './2026_11_24_1300_create_app_fee_claims.js';
import * as addSponsorshipAllowance from './2026_11_24_1400_add_sponsorship_allowance.js';
import * as createLedgerReconciliations from './2026_11_24_1500_create_ledger_reconciliations.js';
import * as indexDepositAddressesCreated from './2026_11_24_1600_index_deposit_addresses_created.js';
import * as searchIndexes from './2026_11_25_0100_search_indexes.js';
import * as historyAndRetentionIndexes from './2026_11_26_0100_history_and_retention_indexes.js';
import * as hashOrderIdIndex from './2026_11_27_0100_hash_order_id_index.js';
import * as requestsToastTupleTarget from './2026_11_28_0100_requests_toast_tuple_target.js';
import * as requestsUnsampledColumns from './2026_11_28_0200_requests_unsampled_columns.js';
import * as requestsRecipientPartialIndex from './2026_11_28_0300_requests_recipient_partial_index.js';
import * as requestsDomainChecks from './2026_11_28_0400_requests_domain_checks.js';
import * as createPermitDeadlines from './2026_11_29_0500_create_permit_deadlines.js';
import * as createSolverNonces from './2026_11_30_0100_create_solver_nonces.js';
import * as reserveQuoteSponsorship from './2026_11_29_1100_reserve_quote_sponsorship.js';
import * as flagReorgedDeposits from './2026_11_29_2300_flag_reorged_deposits.js';
import * as dustAndSolverCarriers from './2026_11_29_2200_dust_and_solver_carriers.js';
import * as createExecutionReverts from './2026_11_29_2100_create_execution_reverts.js';
import * as createPermits from './2026_11_24_1000_create_permits.js';
import * as createGaslessSubmissions from './2026_11_24_1100_create_gasless_submissions.js';
import * as createDepositAddresses from './2026_11_24_1200_create_deposit_addresses.js';
import * as settleByDepositIdentity from './2026_11_29_2000_settle_by_deposit_identity.js';
import * as requestFilterColumns from './2026_12_01_0500_request_filter_columns.js';
import * as backfillRequestFilterColumns from './2026_12_01_1000_backfill_request_filter_columns.js';
import * as requestRowVersions from './2026_12_03_0300_request_row_versions.js';
import * as settlementItemsReleaseTx from './2026_12_03_0400_settlement_items_release_tx.js';
import * as outgoingTxsRebalanceKind from './2026_12_02_0700_outgoing_txs_rebalance_kind.js';
import * as requestsCommittedOutflow from './2026_12_03_0200_requests_committed_outflow.js';

/**
 * Every migration, by name. A static list rather than a folder scan, so it works the same from source (tsx),
 * from a bundle and in tests; kysely runs them in name order.
 */
export const migrations: Record<string, Migration> = {
  '2026_11_22_0300_create_requests': createRequests,
  '2026_11_22_0301_create_request_events': createRequestEvents,
  '2026_11_22_0302_create_chain_cursors': createChainCursors,
  '2026_11_22_0303_create_deposits': createDeposits,
  '2026_11_22_0304_create_outgoing_txs': createOutgoingTxs,
  '2026_11_22_0305_create_api_keys': createApiKeys,
  '2026_11_22_0306_add_quote_volume_and_revenue_share': addQuoteVolume,
  '2026_11_22_0307_add_fast_fill': addFastFill,
  '2026_11_22_0308_create_rate_limit_counters': createRateLimitCounters,
  '2026_11_22_0320_create_webhook_deliveries': createWebhookDeliveries,
  '2026_11_22_0330_lighter_request_inserts': lighterRequestInserts,
  '2026_11_23_0400_add_deposit_sender': addDepositSender,
  '2026_11_23_2330_create_ledger_entries': createLedgerEntries,
  '2026_11_23_2331_create_settlement_items': createSettlementItems,
  '2026_11_24_0100_create_chain_genesis': createChainGenesis,
  '2026_11_24_1000_create_permits': createPermits,
  '2026_11_24_1100_create_gasless_submissions': createGaslessSubmissions,
  '2026_11_24_1200_create_deposit_addresses': createDepositAddresses,
  '2026_11_24_1300_create_app_fee_claims': createAppFeeClaims,
  '2026_11_24_1400_add_sponsorship_allowance': addSponsorshipAllowance,
  '2026_11_24_1500_create_ledger_reconciliations': createLedgerReconciliations,
  '2026_11_24_1600_index_deposit_addresses_created': indexDepositAddressesCreated,
  '2026_11_25_0100_search_indexes': searchIndexes,
  '2026_11_26_0100_history_and_retention_indexes': historyAndRetentionIndexes,
  '2026_11_27_0100_hash_order_id_index': hashOrderIdIndex,
  '2026_11_28_0100_requests_toast_tuple_target': requestsToastTupleTarget,
  '2026_11_28_0200_requests_unsampled_columns': requestsUnsampledColumns,
  '2026_11_28_0300_requests_recipient_partial_index': requestsRecipientPartialIndex,
  '2026_11_28_0400_requests_domain_checks': requestsDomainChecks,
  '2026_11_29_0500_create_permit_deadlines': createPermitDeadlines,
  '2026_11_29_1100_reserve_quote_sponsorship': reserveQuoteSponsorship,
  '2026_11_29_2000_settle_by_deposit_identity': settleByDepositIdentity,
  '2026_11_29_2100_create_execution_reverts': createExecutionReverts,
  '2026_11_29_2200_dust_and_solver_carriers': dustAndSolverCarriers,
  '2026_11_29_2300_flag_reorged_deposits': flagReorgedDeposits,
  '2026_11_30_0100_create_solver_nonces': createSolverNonces,
  '2026_12_01_0500_request_filter_columns': requestFilterColumns,
  '2026_12_01_1000_backfill_request_filter_columns': backfillRequestFilterColumns,
  '2026_12_02_0700_outgoing_txs_rebalance_kind': outgoingTxsRebalanceKind,
  '2026_12_03_0200_requests_committed_outflow': requestsCommittedOutflow,
  '2026_12_03_0300_request_row_versions': requestRowVersions,
  '2026_12_03_0400_settlement_items_release_tx': settlementItemsReleaseTx,
};
