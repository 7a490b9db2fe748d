import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import type { components } from '../../../generated/openapi/types.js';
import { getRequests as getRequestsCore } from '../../core/requests/getRequests.js';
import { sharedRequestsParameters } from '../requestsQuery.js';
import type { RequestTransaction, RequestView } from '../../core/requests/types.js';
import { toWire } from '../wire.js';
import type { RestContext } from '../context.js';

type Schemas = components['schemas'];

/** A transaction of the history in the v3 wire shape (the v2 shape names `txHash` `hash`). */
export const wireTransaction = (tx: RequestTransaction) => ({
  txHash: tx.hash,
  chainId: tx.chainId,
  ...(tx.block === null ? {} : { block: tx.block }),
  type: 'onchain' as const,
  timestamp: tx.timestamp,
  status: tx.status,
});

const iso = (ms: number): string => new Date(ms).toISOString();

/** A record of `GET /requests/v3`: the core's request with its history data under `data`, dates as ISO strings. */
function toRequestV3(view: RequestView): Schemas['RequestV3'] {
  const owner = view.owner;
  const data = {
    slippageTolerance: view.slippageToleranceBps === null ? null : String(view.slippageToleranceBps),
    // Reasons are plain strings in the core, recorded from the contract's enums.
    failReason: view.failReason as Schemas['RequestV3Data']['failReason'],
    refundFailReason: view.refundFailReason as Schemas['RequestV3Data']['refundFailReason'],
    usesExternalLiquidity: view.usesExternalLiquidity,
    timeEstimate: view.timeEstimate,
    inTxs: view.inTxs.map(wireTransaction),
    outTxs: view.outTxs.map(wireTransaction),
    appFees:
      view.appFees === null
        ? null
        : {
            quoted: view.appFees.quoted.map((fee) => toWire({ ...fee, bps: String(fee.bps) })),
            actual: view.appFees.actual.map((fee) => toWire({ ...fee, bps: String(fee.bps) })),
            currency: view.appFees.currency,
          },
    feeSponsorship: toWire(view.feeSponsorship),
    fees: toWire(view.fees),
    // Free-form in the contract, which openapi-typescript types as an empty record.
    platformFee: (owner === null ? null : toWire(owner.platformFee)) as Schemas['RequestV3Data']['platformFee'],
    referrer: owner === null ? null : owner.referrer,
    apiKeyName: owner === null ? null : owner.apiKeyName,
    route: toWire(view.route),
    refundCurrencyData: toWire(view.refundCurrency),
  };
  const { solver, ...protocol } = view.protocol;
  return {
    id: view.id,
    status: view.status,
    user: view.user,
    recipient: view.recipient,
    sender: view.sender,
    refundTo: view.refundTo,
    supersededByRequestId: view.supersededByRequestId,
    depositAddress: view.depositAddress,
    requestType: view.requestType,
    features: view.features,
    createdAt: iso(view.createdAt),
    updatedAt: iso(view.updatedAt),
    data,
    protocol: solver === null ? protocol : { ...protocol, solver },
  };
}

/** GET /requests/v3 */
export async function getRequests(
  input: OperationInput<'getRequests'>,
  context: RestContext,
): Promise<OperationOutput<'getRequests'>> {
  const { query } = input;
  const { caller } = context;
  const result = await getRequestsCore(
    context.core,
    {
      ...sharedRequestsParameters(query),
      sortBy: query.sortBy,
      user: query.user,
      status: query.status,
      recipient: query.recipient,
      failReason: query.failReason,
      includeTotal: query.includeTotal,
      depositTxHash: query.depositTxHash,
      fillTxHash: query.fillTxHash,
      refundTxHash: query.refundTxHash,
      requestType: query.requestType,
      term: query.term,
      currencyInChainId: query.currencyInChainId,
      currencyOutChainId: query.currencyOutChainId,
      currencyInAddress: query.currencyInAddress,
      currencyOutAddress: query.currencyOutAddress,
      currencyInSymbol: query.currencyInSymbol,
      currencyOutSymbol: query.currencyOutSymbol,
      amountUsdMin: query.amountUsdMin,
      amountUsdMax: query.amountUsdMax,
      fillTimeMin: query.fillTimeMin,
      fillTimeMax: query.fillTimeMax,
      appFeesAmountUsdMin: query.appFeesAmountUsdMin,
      appFeesAmountUsdMax: query.appFeesAmountUsdMax,
      refundFailReason: query.refundFailReason,
      features: query.features,
      privateChainsToInclude: query.privateChainsToInclude,
      filters: query.filters,
    },
    caller,
  );
  return {
    status: 200,
    body: {
      requests: result.requests.map(toRequestV3),
      ...(result.continuation === undefined ? {} : { continuation: result.continuation }),
      ...(result.total === undefined ? {} : { total: result.total }),
    },
  };
}
