/**
 * Internal values of the GraphQL enums. The schema spells enum values in SCREAMING_CASE; the core (and the
 * REST wire) in its own spelling (`evm`, `waiting`, `All`). codegen.ts declares the mapping, which types every
 * enum as the union of its internal values; this map hands the same values to the executor, so resolvers pass
 * core values through unchanged in both directions. Each entry's type is generated from codegen.ts, so the
 * two cannot drift apart.
 */
import type { Chain } from '../core/chains/types.js';
import type {
  AppFeeClaimStatusResolvers,
  DepositAddressTypeResolvers,
  ExecutionKindResolvers,
  FeeComponentResolvers,
  PermitKindResolvers,
  RequestFeatureResolvers,
  RequestSortByResolvers,
  RequestStatusResolvers,
  SignatureKindResolvers,
  SortDirectionResolvers,
  StepItemStatusResolvers,
  StepKindResolvers,
  TokenSupport,
  TokenSupportResolvers,
  TransactionStatusResolvers,
  VmType,
  VmTypeResolvers,
} from '../../generated/graphql/resolvers.js';

export const enumResolvers = {
  AppFeeClaimStatus: {
    WAITING: 'waiting',
    PENDING: 'pending',
    SUCCESS: 'success',
    FAILURE: 'failure',
    EXPIRED: 'expired',
  } satisfies AppFeeClaimStatusResolvers,
  DepositAddressType: { OPEN: 'open', STRICT: 'strict' } satisfies DepositAddressTypeResolvers,
  ExecutionKind: { RAW_CALLS: 'rawCalls' } satisfies ExecutionKindResolvers,
  FeeComponent: {
    EXECUTION: 'execution',
    SWAP: 'swap',
    PLATFORM: 'platform',
    APP: 'app',
  } satisfies FeeComponentResolvers,
  PermitKind: { EIP3009: 'eip3009', PERMIT2: 'permit2', CLAIM: 'claim' } satisfies PermitKindResolvers,
  RequestStatus: {
    WAITING: 'waiting',
    DEPOSITING: 'depositing',
    PENDING: 'pending',
    SUBMITTED: 'submitted',
    SUCCESS: 'success',
    FAILURE: 'failure',
    REFUND: 'refund',
    FALLBACK: 'fallback',
  } satisfies RequestStatusResolvers,
  RequestFeature: {
    GASLESS_EXECUTION: 'gasless_execution',
    GASLESS_SWAP: 'gasless_swap',
    FAST_FILL: 'fast_fill',
    GAS_TOP_UP: 'gas_top_up',
    FIXED_RATE: 'fixed_rate',
    APP_FEES: 'app_fees',
    DEPOSIT_ADDRESS: 'deposit_address',
  } satisfies RequestFeatureResolvers,
  RequestSortBy: {
    CREATED_AT: 'createdAt',
    UPDATED_AT: 'updatedAt',
    AMOUNT_USD: 'amountUsd',
  } satisfies RequestSortByResolvers,
  SignatureKind: { EIP191: 'eip191', EIP712: 'eip712' } satisfies SignatureKindResolvers,
  SortDirection: { ASC: 'asc', DESC: 'desc' } satisfies SortDirectionResolvers,
  StepItemStatus: { INCOMPLETE: 'incomplete', COMPLETE: 'complete' } satisfies StepItemStatusResolvers,
  StepKind: { TRANSACTION: 'transaction', SIGNATURE: 'signature' } satisfies StepKindResolvers,
  TokenSupport: { ALL: 'All', LIMITED: 'Limited' } satisfies TokenSupportResolvers,
  TransactionStatus: { SUCCESS: 'success', FAILURE: 'failure' } satisfies TransactionStatusResolvers,
  VmType: {
    BVM: 'bvm',
    EVM: 'evm',
    SVM: 'svm',
    TVM: 'tvm',
    TONVM: 'tonvm',
    HYPEVM: 'hypevm',
    LVM: 'lvm',
    XRPVM: 'xrpvm',
  } satisfies VmTypeResolvers,
};

// Core types returned as-is must stay within the enums' internal values (a compile error otherwise).
type Assert<T extends true> = T;
export type CoreEnumsCovered = Assert<
  [Chain['vmType'], Chain['tokenSupport']] extends [VmType, TokenSupport] ? true : false
>;
