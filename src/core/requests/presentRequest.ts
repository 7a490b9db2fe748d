import type { RequestDepositAddress as StoredDepositAddress } from '../../records/depositAddress.js';
import { getAddress, isAddress, zeroAddress, type Address } from 'viem';
import type { RequestRecord } from '../../records/request.js';
import { parseStoredFees, type StoredFees } from '../../store/storedFees.js';
import { addressOnlyDepositAddress, toStatusDepositAddress } from '../../records/requestStatus.js';
import { findCurrency } from '../chains/requireChain.js';
import type { CoreContext } from '../context.js';
import {
  amountOf,
  expandedPriceImpact,
  feeBuckets,
  legacyAppFees,
  legacyRequestFees,
  platformFeeInfo,
  requestAppFees,
} from '../fees/presentFees.js';
import { quoteCurrency, type Amount, type QuoteCurrency } from '../vocabulary/amount.js';
import { rateOf } from '../quote/present.js';
import type { FeeSponsorshipPhase } from '../quote/types.js';
import { SWAP_SOURCE } from '../chains/dexSources.js';
import { dexLegsOf } from '../dex/legRecord.js';
import type { KeyScope } from './access.js';
import { paidRecipientOf } from './paidRecipient.js';
import { failReasonOf, orNoReason, refundFailReasonOf, statusV2, toWebhookDepositAddress } from './statusRules.js';
import { asObject, parseSponsorshipPhase, toPhaseV3 } from './storedSponsorship.js';
import type { RequestTransactions } from './transactions.js';
import type {
  RequestDepositAddress,
  RequestFeature,
  RequestOwnerData,
  RequestProtocol,
  RequestRoute,
  RequestType,
  RequestView,
  RequestViewV2,
  RouteLeg,
} from './types.js';

/** What presenting a request needs besides the row: its transactions and who is looking. */
export interface PresentContext {
  transactions: RequestTransactions;
  scope: KeyScope;
  /** The request's deposit address as recorded (`depositAddressesOfRequests`), when it has one and it was read. */
  depositAddress?: StoredDepositAddress | undefined;
}

/** A request as `GET /requests/v3` and GraphQL present it. */
export function presentRequest(ctx: CoreContext, record: RequestRecord, present: PresentContext): RequestView {
  const parts = partsOf(ctx, record);
  const { fees, feeCurrency, currencyIn, currencyOut } = parts;
  return {
    id: record.id,
    status: record.status,
    user: record.user,
    recipient: record.recipient,
    sender: record.sender,
    refundTo: record.refundTo,
    requestType: requestTypeOf(record),
    features: featuresOf(record, fees),
    originChainId: record.originChainId,
    destinationChainId: record.destinationChainId,
    currencyIn: parts.paidIn,
    currencyOut,
    depositAddress: depositAddressOf(record, present),
    supersededByRequestId: present.depositAddress?.supersededByRequestId ?? null,
    orderId: record.orderId,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    slippageToleranceBps: parts.slippageBps,
    failReason: failReasonOf(record),
    refundFailReason: refundFailReasonOf(record),
    usesExternalLiquidity: false,
    timeEstimate: parts.timeEstimate,
    inTxs: present.transactions.inTxs,
    outTxs: present.transactions.outTxs,
    fees:
      fees === null
        ? null
        : {
            quoted: feeBuckets(fees, feeCurrency),
            actual: parts.actual === null ? null : feeBuckets(parts.actual, feeCurrency),
            currency: feeCurrency,
          },
    appFees: fees === null || fees.appFees.length === 0 ? null : requestAppFees(fees, parts.actual, feeCurrency),
    feeSponsorship:
      parts.sponsorship === null ? null : { quoted: toPhaseV3(parts.sponsorship), actual: null, currency: feeCurrency },
    route: routeOf(ctx, record, parts, currencyOut),
    refundCurrency: currencyIn,
    protocol: parts.protocol,
    owner: ownerData(record, present.scope, fees, feeCurrency),
  };
}

/** A request in the earlier shape of `GET /requests/v2`. */
export function presentRequestV2(ctx: CoreContext, record: RequestRecord, present: PresentContext): RequestViewV2 {
  const parts = partsOf(ctx, record);
  const { fees, feeCurrency, currencyIn, currencyOut } = parts;
  const owner = ownerData(record, present.scope, fees, feeCurrency);
  return {
    id: record.id,
    status: statusV2[record.status],
    user: record.user,
    recipient: record.recipient,
    depositAddress: toWebhookDepositAddress(depositAddressOf(record, present)),
    supersededByRequestId: present.depositAddress?.supersededByRequestId ?? null,
    slippageToleranceBps: parts.slippageBps,
    failReason: orNoReason(failReasonOf(record)),
    refundFailReason: orNoReason(refundFailReasonOf(record)),
    ...legacyRequestFees(fees),
    subsidizedRequest: fees !== null && fees.sponsored > 0n,
    inTxs: present.transactions.inTxs,
    outTxs: present.transactions.outTxs,
    currency: currencyConfig(ctx, record.originChainId, record.originCurrency)?.id ?? null,
    currencyObject: currencyIn.currency,
    feeCurrency: fees === null ? null : (currencyConfig(ctx, fees.currency.chainId, fees.currency.address)?.id ?? null),
    feeCurrencyObject: fees === null ? null : feeCurrency,
    refundCurrencyData: currencyIn,
    appFees: legacyAppFees(fees),
    paidAppFees: legacyAppFees(parts.actual),
    feeSponsorship: parts.sponsorship === null ? null : { quoted: parts.sponsorship },
    expandedPriceImpact:
      fees === null
        ? null
        : {
            quoted: expandedPriceImpact({
              ...fees.usdMicros,
              swap: fees.usdMicros.swapWithImpact ?? fees.usdMicros.swap,
            }),
            actual: parts.actual === null ? null : expandedPriceImpact(parts.actual.usdMicros),
          },
    platformFee: owner?.platformFee ?? null,
    metadata: {
      sender: record.sender,
      // As the quote's `details.recipient`: whom the fill pays (the multicaller when the request has calls).
      recipient: paidRecipientOf(record),
      currencyIn: parts.paidIn,
      currencyOut,
      ...gasTopupField(ctx, record),
      rate: rateOf(
        parts.paidIn.amount,
        parts.paidIn.currency.decimals,
        record.amountOut,
        currencyOut.currency.decimals,
      ),
    },
    price: record.amountOut,
    usesExternalLiquidity: false,
    timeEstimate: parts.timeEstimate,
    protocol: parts.protocol,
    referrer: owner?.referrer ?? null,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

/** The request's deposit address as recorded, or known by its address alone when it was not read; null when none. */
function depositAddressOf(record: RequestRecord, present: PresentContext): RequestDepositAddress | null {
  if (present.depositAddress !== undefined) return toStatusDepositAddress(present.depositAddress);
  return record.depositAddress === null ? null : addressOnlyDepositAddress(record.depositAddress);
}

interface Parts {
  fees: StoredFees | null;
  actual: StoredFees | null;
  feeCurrency: QuoteCurrency;
  /** What the request's deposit is in (refunds return it). */
  currencyIn: Amount;
  /**
   * What the user paid: `currencyIn`, or the token an origin swap turned into it (`quote.dex.origin`), with the
   * router that swapped it.
   */
  paidIn: Amount;
  originRouter: string;
  currencyOut: Amount;
  slippageBps: number | null;
  timeEstimate: number | null;
  sponsorship: FeeSponsorshipPhase | null;
  protocol: RequestProtocol;
}

/** What both shapes read from the row and its stored quote. */
function partsOf(ctx: CoreContext, record: RequestRecord): Parts {
  const fees = parseStoredFees(record.feesQuoted);
  if (fees === null)
    ctx.log.warn({ requestId: record.id }, 'stored fees of a request are missing or malformed; shown without fees');
  const actual = parseStoredFees(record.feesActual);
  const inCurrency = currencyOf(ctx, record.originChainId, record.originCurrency, fees?.currency);
  const outCurrency = currencyOf(ctx, record.destinationChainId, record.destinationCurrency);
  const quote = record.quote;
  const currencyIn = amountOf(inCurrency, record.amountIn, fees?.usdMicros.in ?? 0n);
  const swapped = dexLegsOf(quote).origin;
  return {
    fees,
    actual,
    feeCurrency:
      fees === null ? inCurrency : currencyOf(ctx, fees.currency.chainId, fees.currency.address, fees.currency),
    currencyIn,
    paidIn:
      swapped === undefined
        ? currencyIn
        : amountOf(
            currencyOf(ctx, record.originChainId, swapped.tokenIn),
            BigInt(swapped.amountIn),
            fees?.usdMicros.in ?? 0n,
          ),
    originRouter: swapped?.source ?? SWAP_SOURCE,
    currencyOut: amountOf(outCurrency, record.amountOut, fees?.usdMicros.out ?? 0n, record.minAmountOut),
    slippageBps: typeof quote.slippageBps === 'number' ? quote.slippageBps : null,
    timeEstimate: typeof quote.timeEstimate === 'number' ? quote.timeEstimate : null,
    sponsorship: parseSponsorshipPhase(asObject(asObject(quote.feeSponsorship)?.quoted)),
    protocol: protocolOf(record),
  };
}

/** The request type of the history, from the route's operation (`swap` splits into same-chain and cross-chain). */
function requestTypeOf(record: RequestRecord): RequestType | null {
  switch (record.operation) {
    case 'bridge':
      return 'Bridge';
    case 'swap':
      return record.originChainId === record.destinationChainId ? 'Same-chain Swap' : 'Crosschain Swap';
    case 'send':
      return 'Send';
    case 'wrap':
      return 'Wrap';
    case 'unwrap':
      return 'Unwrap';
    case 'call':
      return 'Call';
    default:
      return null;
  }
}

function featuresOf(record: RequestRecord, fees: StoredFees | null): RequestFeature[] {
  const features: RequestFeature[] = [];
  if (record.quote.gasTopup !== undefined) features.push('gas_top_up');
  if (fees !== null && fees.appFees.length > 0) features.push('app_fees');
  if (record.depositAddress !== null) features.push('deposit_address');
  return features;
}

/** The configured currency of a chain by address (any casing), if the deployment still lists it. */
function currencyConfig(ctx: CoreContext, chainId: number, address: string) {
  const chain = ctx.config.chains.find((candidate) => candidate.id === chainId);
  if (chain === undefined) return undefined;
  return findCurrency(chain, address);
}

/**
 * A request's currency with its catalogue metadata. A currency the configuration no longer lists keeps what
 * the row knows (symbol and decimals of the fee currency; otherwise none) rather than failing the history.
 */
function currencyOf(
  ctx: CoreContext,
  chainId: number,
  address: string,
  known?: { symbol: string; decimals: number },
): QuoteCurrency {
  const configured = currencyConfig(ctx, chainId, address);
  if (configured !== undefined) return quoteCurrency(chainId, configured);
  const checksummed: Address = isAddress(address, { strict: false }) ? getAddress(address) : (address as Address);
  return {
    chainId,
    address: checksummed,
    symbol: known?.symbol ?? 'UNKNOWN',
    name: known?.symbol ?? 'Unknown currency',
    decimals: known?.decimals ?? 0,
    metadata: { logoURI: '', verified: false, isNative: checksummed === zeroAddress },
  };
}

/**
 * Route legs: the quote's (origin: the input in and out of the origin leg; destination: the quoted output).
 * The actual route falls back to the quoted one until the fill; a request that ended without a fill
 * (`failure`, `refund`, `fallback`) shows the deposit going in and nothing coming out.
 */
function routeOf(
  ctx: CoreContext,
  record: RequestRecord,
  { paidIn, currencyIn, originRouter }: Pick<Parts, 'paidIn' | 'currencyIn' | 'originRouter'>,
  currencyOut: Amount,
): RequestRoute {
  const origin: RouteLeg = { inputCurrency: paidIn, outputCurrency: currencyIn, router: originRouter };
  // A destination leg bought through the pools names the source that executes it, as the quote did.
  const router = dexLegsOf(record.quote).destination?.source ?? SWAP_SOURCE;
  const destination: RouteLeg = { inputCurrency: currencyOut, outputCurrency: currencyOut, router };
  const noFill = record.status === 'failure' || record.status === 'refund' || record.status === 'fallback';
  const topup = gasTopupField(ctx, record);
  return {
    quoted: { origin, destination },
    actual: noFill
      ? {
          origin: { ...origin, outputCurrency: null },
          destination: { ...destination, outputCurrency: null },
          ...(topup.currencyGasTopup === undefined ? {} : { currencyGasTopup: null }),
        }
      : { origin, destination, ...topup },
  };
}

/**
 * The native gas a request's fill delivers with the output (`topupGas`), as the quote showed it: the amount sent
 * and the USD it was charged. Empty without a top-up.
 */
function gasTopupField(ctx: CoreContext, record: RequestRecord): { currencyGasTopup?: Amount } {
  const stored = asObject(record.quote.gasTopup);
  if (
    stored === null ||
    stored === undefined ||
    typeof stored.amount !== 'string' ||
    typeof stored.usdMicros !== 'string'
  )
    return {};
  const native = currencyOf(ctx, record.destinationChainId, zeroAddress);
  const amount = BigInt(stored.amount);
  return { currencyGasTopup: amountOf(native, amount, BigInt(stored.usdMicros), amount) };
}

function protocolOf(record: RequestRecord): RequestProtocol {
  const orderData = asObject(asObject(record.quote.order)?.orderData);
  const solver = orderData?.solver;
  const solverChainId = orderData?.solverChainId;
  return {
    orderId: record.orderId,
    hubType: 'onchain',
    solver:
      typeof solver === 'string' && typeof solverChainId === 'string'
        ? { address: solver, protocolChainId: solverChainId }
        : null,
  };
}

function ownerData(
  record: RequestRecord,
  scope: KeyScope,
  fees: StoredFees | null,
  feeCurrency: QuoteCurrency,
): RequestOwnerData | null {
  const owner = record.apiKeyId === null ? undefined : scope.owners.get(record.apiKeyId);
  if (owner === undefined) return null;
  const platformFee = fees === null ? null : platformFeeInfo(fees, feeCurrency);
  return { referrer: record.referrer, apiKeyName: owner.name, platformFee };
}
