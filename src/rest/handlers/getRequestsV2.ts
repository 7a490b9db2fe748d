import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import type { components } from '../../../generated/openapi/types.js';
import { getRequestsV2 as getRequestsV2Core } from '../../core/requests/getRequestsV2.js';
import type { RequestTransaction, RequestViewV2 } from '../../core/requests/types.js';
import { toWire } from '../wire.js';
import { sharedRequestsParameters } from '../requestsQuery.js';
import { wireTransaction } from './getRequests.js';
import type { RestContext } from '../context.js';

type Schemas = components['schemas'];

const wireTransactionV2 = (tx: RequestTransaction) => {
  const { txHash, ...rest } = wireTransaction(tx);
  return { hash: txHash, ...rest };
};

const iso = (ms: number): string => new Date(ms).toISOString();

/** A record of `GET /requests/v2`: the earlier shape, dates as ISO strings. */
function toRequestV2(view: RequestViewV2 & { orderData?: unknown }): Schemas['RequestV2'] {
  const appFee = (fee: RequestViewV2['appFees'][number]) => ({ ...toWire(fee), bps: String(fee.bps) });
  const data = {
    slippageTolerance: view.slippageToleranceBps === null ? null : String(view.slippageToleranceBps),
    // Reasons are plain strings in the core, recorded from the contract's enums.
    failReason: view.failReason as Schemas['RequestV2Data']['failReason'],
    refundFailReason: view.refundFailReason as Schemas['RequestV2Data']['refundFailReason'],
    supersededByRequestId: view.supersededByRequestId,
    fees: toWire(view.fees),
    ...(view.feesUsd === null ? {} : { feesUsd: view.feesUsd }),
    inTxs: view.inTxs.map(wireTransactionV2),
    outTxs: view.outTxs.map(wireTransactionV2),
    ...(view.currency === null ? {} : { currency: view.currency }),
    ...(view.feeCurrency === null ? {} : { feeCurrency: view.feeCurrency }),
    currencyObject: view.currencyObject,
    // App fees are charged in the fee currency too.
    ...(view.feeCurrencyObject === null
      ? {}
      : { feeCurrencyObject: view.feeCurrencyObject, appFeeCurrencyObject: view.feeCurrencyObject }),
    refundCurrencyData: toWire(view.refundCurrencyData),
    appFees: view.appFees.map(appFee),
    paidAppFees: view.paidAppFees.map(appFee),
    subsidizedRequest: view.subsidizedRequest,
    feeSponsorship: toWire(view.feeSponsorship),
    expandedPriceImpact: view.expandedPriceImpact,
    // Free-form in the contract, which openapi-typescript types as an empty record.
    platformFee: toWire(view.platformFee) as Schemas['RequestV2Data']['platformFee'],
    metadata: toWire(view.metadata),
    price: view.price.toString(),
    usesExternalLiquidity: view.usesExternalLiquidity,
    timeEstimate: view.timeEstimate,
  };
  const { solver, ...protocol } = view.protocol;
  return {
    id: view.id,
    status: view.status,
    user: view.user,
    recipient: view.recipient,
    depositAddress: view.depositAddress,
    data,
    protocol: solver === null ? protocol : { ...protocol, solver },
    ...(view.orderData === undefined ? {} : { orderData: view.orderData as Schemas['RequestV2']['orderData'] }),
    referrer: view.referrer,
    createdAt: iso(view.createdAt),
    updatedAt: iso(view.updatedAt),
  };
}

/** GET /requests/v2 (deprecated): the notice is in the body; the headers are added to every answer (`../deprecation.ts`). */
export async function getRequestsV2(
  input: OperationInput<'getRequestsV2'>,
  context: RestContext,
): Promise<OperationOutput<'getRequestsV2'>> {
  const { query } = input;
  const result = await getRequestsV2Core(context.core, {
    ...sharedRequestsParameters(query),
    sortBy: query.sortBy,
    user: query.user,
    hash: query.hash,
    status: query.status,
    includeOrderData: query.includeOrderData,
  });
  const { documentation: _documentation, ...deprecation } = result.deprecation;
  return {
    status: 200,
    body: {
      requests: result.requests.map(toRequestV2),
      ...(result.continuation === undefined ? {} : { continuation: result.continuation }),
      deprecation: { ...deprecation, deprecatedAt: iso(deprecation.deprecatedAt), sunsetAt: iso(deprecation.sunsetAt) },
    },
  };
}
