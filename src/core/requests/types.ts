import type { RequestStatus, RequestStatusSnapshot, StatusDepositAddress } from '../../records/requestStatus.js';
import type { JsonObject } from '../../records/json.js';
import type { FeeSponsorshipPhase, QuoteDetails } from '../quote/types.js';
import type { FeeBuckets, LegacyRequestFees, PlatformFeeInfo, RequestAppFees } from '../vocabulary/fees.js';
import type { Amount, QuoteCurrency } from '../vocabulary/amount.js';

export type { RequestStatus };

/** The fields of a status snapshot that the status rules render (`statusFieldsOf`), in their rendered types. */
interface RenderedStatusFields {
  details: JsonObject | null;
  /** `N/A` on non-failure statuses; on `failure`, `fallback` and `refund` the recorded reason or `UNKNOWN`. */
  failReason: string;
  /** The recorded reason a refund leg failed, or `N/A`. */
  refundFailReason: string;
}

/** A status snapshot (`RequestStatusSnapshot`, the source shape) with the status rules applied. */
export type RenderedStatus = Omit<RequestStatusSnapshot, keyof RenderedStatusFields> & RenderedStatusFields;

/** What every form of the status record (status operation, streams, webhooks) shares, with the rules applied. */
export type StatusFields = Omit<RenderedStatus, 'requestId' | 'referrer' | 'depositAddress'>;

/**
 * The status record of a request (`GET /intents/status/v3`, GraphQL `requestStatus`): the shared fields with the
 * request id and when the request was quoted. Fail reasons are already rendered by the status rules.
 */
export type IntentStatus = Pick<RenderedStatus, 'requestId'> &
  StatusFields & {
    /** Unix milliseconds of the quote that created the request. */
    quoteCreatedAt: number;
  };

/** Statuses of the earlier status operation (`GET /intents/status`). */
export type IntentStatusV1Status = 'waiting' | 'pending' | 'received' | 'success' | 'failure' | 'fallback';

/** What the earlier status operations (`GET /intents/status`, `/intents/status/v2`) carry of the status record. */
export type EarlierStatusFields = Pick<
  StatusFields,
  'inTxHashes' | 'txHashes' | 'originChainId' | 'destinationChainId'
> & {
  /** `details` as text, or null. */
  details: string | null;
  /** Unix milliseconds of the last status change (`updatedAt`). */
  time: number;
};

/** The status record in the earlier shape (`GET /intents/status`). */
export type IntentStatusV1 = { status: IntentStatusV1Status } & EarlierStatusFields;

/** Request types of the history (`requestType`). */
export type RequestType = 'Bridge' | 'Crosschain Swap' | 'Same-chain Swap' | 'Send' | 'Wrap' | 'Unwrap' | 'Call';

export type RequestFeature =
  'gasless_execution' | 'gasless_swap' | 'fast_fill' | 'gas_top_up' | 'fixed_rate' | 'app_fees' | 'deposit_address';

/** A transaction of a request, as far as the gateway recorded it. */
export interface RequestTransaction {
  hash: string;
  chainId: number;
  /** Block number, when the gateway recorded the block (deposits). */
  block: number | null;
  /**
   * Unix seconds. The gateway does not store block times: this is when it first recorded the hash (within
   * about one block time of the block).
   */
  timestamp: number;
  status: 'success' | 'failure';
}

/** Fees of a request: as quoted, and as computed at fill time (null before). */
export interface RequestFees {
  quoted: FeeBuckets;
  actual: FeeBuckets | null;
  /** The fee currency (the input currency of the request). */
  currency: QuoteCurrency;
}

/** An amount whose currency is given beside it. */
export interface BareAmount {
  amount: bigint;
  amountFormatted: string;
  amountUsd: string;
  minimumAmount: bigint;
}

export type SponsorshipComponentV3 = 'execution' | 'swap' | 'platform' | 'app' | 'rent';

/** A sponsorship phase with the platform component named `platform` and amounts without their currency. */
export interface SponsorshipPhase {
  selectedComponents: SponsorshipComponentV3[];
  /** Cap in micro-USD, when the quote set one. */
  maxSubsidizationAmount?: bigint;
  capHit: boolean;
  components: Record<
    SponsorshipComponentV3,
    { selected: boolean; total: BareAmount; sponsored: BareAmount; userPays: BareAmount }
  >;
  sponsoredTotal: BareAmount;
  userPaysTotal: BareAmount;
}

export interface RequestFeeSponsorship {
  quoted: SponsorshipPhase | null;
  actual: SponsorshipPhase | null;
  currency: QuoteCurrency;
}

export interface RouteLeg {
  inputCurrency: Amount;
  /** Null when nothing came out of the leg (no fill happened). */
  outputCurrency: Amount | null;
  router: string;
}

export interface RequestRoute {
  quoted: { origin: RouteLeg; destination: RouteLeg };
  /** The route as executed; the quoted legs until the fill. */
  actual: { origin: RouteLeg | null; destination: RouteLeg | null; currencyGasTopup?: Amount | null };
}

/** A request's deposit address: the one a status record carries. */
export type RequestDepositAddress = StatusDepositAddress;

export interface RequestProtocol {
  orderId: string;
  hubType: 'onchain';
  solver: { address: string; protocolChainId: string } | null;
}

/** Data only the API key that created the request sees. */
export interface RequestOwnerData {
  referrer: string | null;
  apiKeyName: string | null;
  platformFee: PlatformFeeInfo | null;
}

/** A request as the history presents it (`GET /requests/v3`, GraphQL `request` / `requests`). */
export interface RequestView {
  id: string;
  status: RequestStatus;
  user: string;
  recipient: string;
  sender: string | null;
  refundTo: string | null;
  requestType: RequestType | null;
  features: RequestFeature[];
  originChainId: number;
  destinationChainId: number;
  /** What the user pays, as quoted. */
  currencyIn: Amount;
  /** What the recipient gets, as quoted (`minimumAmount` after slippage). */
  currencyOut: Amount;
  depositAddress: RequestDepositAddress | null;
  /** The request that replaced this one (an open deposit address's re-quote of a transfer); null when none. */
  supersededByRequestId: string | null;
  orderId: string;
  /** Unix milliseconds. */
  createdAt: number;
  updatedAt: number;
  slippageToleranceBps: number | null;
  /** Null when the fill did not fail (the status rules, with null for `N/A`). */
  failReason: string | null;
  refundFailReason: string | null;
  usesExternalLiquidity: boolean;
  /** Seconds, as estimated by the quote; null when the stored quote does not say. */
  timeEstimate: number | null;
  inTxs: RequestTransaction[];
  outTxs: RequestTransaction[];
  fees: RequestFees | null;
  appFees: RequestAppFees | null;
  feeSponsorship: RequestFeeSponsorship | null;
  route: RequestRoute;
  /** What a refund returns on the origin chain. */
  refundCurrency: Amount;
  protocol: RequestProtocol;
  /** Null unless the caller's API key created the request. */
  owner: RequestOwnerData | null;
}

/** Statuses of the earlier history (`submitted` is reported as `pending`, `fallback` as `refund`). */
export type RequestStatusV2 = 'waiting' | 'depositing' | 'pending' | 'success' | 'failure' | 'refund';

/** The quote's `details.expandedPriceImpact`, which the earlier history repeats for the request. */
export type ExpandedPriceImpactView = QuoteDetails['expandedPriceImpact'];

/** A request in the earlier shape (`GET /requests/v2`). */
export interface RequestViewV2 {
  id: string;
  status: RequestStatusV2;
  user: string;
  recipient: string;
  depositAddress: {
    address: string;
    depositAddressType: 'open' | 'strict';
    depositor: string | null;
    depositTxHash: string | null;
  } | null;
  /** The request that replaced this one (an open deposit address's re-quote of a transfer); null when none. */
  supersededByRequestId: string | null;
  slippageToleranceBps: number | null;
  /** Rendered like the status operation: `N/A` when none. */
  failReason: string;
  refundFailReason: string;
  /** Zeros when the stored breakdown cannot be read (the contract requires the object). */
  fees: LegacyRequestFees;
  /** The members of `fees` in decimal USD; null when the stored breakdown cannot be read. */
  feesUsd: Record<keyof LegacyRequestFees, string> | null;
  /** True when a sponsor pays part of the fees. */
  subsidizedRequest: boolean;
  inTxs: RequestTransaction[];
  outTxs: RequestTransaction[];
  /** Currency group id of the input currency (`usdc`), when it has one. */
  currency: string | null;
  currencyObject: QuoteCurrency;
  /** Currency group id of the fee currency (the input currency), when it has one. */
  feeCurrency: string | null;
  feeCurrencyObject: QuoteCurrency | null;
  refundCurrencyData: Amount;
  appFees: Array<{ recipient: string; bps: number; amount: bigint; amountUsd: string }>;
  paidAppFees: Array<{ recipient: string; bps: number; amount: bigint; amountUsd: string }>;
  feeSponsorship: { quoted?: FeeSponsorshipPhase } | null;
  /** Costs negative, the sponsored part positive, as in a quote's `details.expandedPriceImpact`. */
  expandedPriceImpact: { quoted: ExpandedPriceImpactView; actual: ExpandedPriceImpactView | null } | null;
  platformFee: PlatformFeeInfo | null;
  metadata: {
    sender: string;
    recipient: string;
    currencyIn: Amount;
    currencyOut: Amount;
    /** The native gas top-up the fill delivers (`topupGas`); absent without one. */
    currencyGasTopup?: Amount;
    rate: string;
  };
  /** Quoted output amount, smallest units. */
  price: bigint;
  usesExternalLiquidity: boolean;
  timeEstimate: number | null;
  protocol: RequestProtocol;
  /** The quote's referrer; null unless the request belongs to a key named in `apiKey`. */
  referrer: string | null;
  createdAt: number;
  updatedAt: number;
}

/** The deprecation notice of an operation (the `deprecation` member and headers of `GET /requests/v2`). */
export interface DeprecationNotice {
  message: string;
  /** Unix milliseconds. */
  deprecatedAt: number;
  sunsetAt: number;
  /** Path of the successor operation. */
  successor: string;
  /** Where to read about migrating (a path on this gateway). */
  migrationGuide: string;
  /** Page that documents the deprecated operation (the `deprecation` / `sunset` links). */
  documentation: string;
}
