import type { QueryResolvers, RequestFilterInput, Resolvers } from '../../../generated/graphql/resolvers.js';
import { statusDepositAddressOf } from '../../core/depositAddresses/lookup.js';
import { isGatewayError } from '../../core/errors.js';
import { getIntentStatus } from '../../core/requests/getIntentStatus.js';
import { countMatchingRequests, getRequests, type GetRequestsParameters } from '../../core/requests/getRequests.js';

/** The schema answers null for an unknown id where REST answers 404. */
async function nullIfNotFound<T>(promise: Promise<T>): Promise<T | null> {
  try {
    return await promise;
  } catch (error) {
    if (isGatewayError(error) && error.code === 'NOT_FOUND') return null;
    throw error;
  }
}

/** The core's filter parameters from the GraphQL filter (`createdBefore` is exclusive, the core's bound inclusive). */
function toFilterParameters(filter: RequestFilterInput | null | undefined): GetRequestsParameters {
  if (filter == null) return {};
  return {
    user: filter.user ?? undefined,
    recipient: filter.recipient ?? undefined,
    originChainId: filter.originChainId ?? undefined,
    destinationChainId: filter.destinationChainId ?? undefined,
    chainId: filter.chainId ?? undefined,
    status: filter.status ?? undefined,
    orderId: filter.orderId ?? undefined,
    depositAddress: filter.depositAddress ?? undefined,
    referrer: filter.referrer ?? undefined,
    from: filter.createdAfter == null ? undefined : filter.createdAfter.getTime(),
    to: filter.createdBefore == null ? undefined : filter.createdBefore.getTime() - 1,
    txHash: filter.txHash ?? undefined,
    amountUsdMin: filter.amountUsdMin ?? undefined,
    amountUsdMax: filter.amountUsdMax ?? undefined,
    startBlock: filter.startBlock ?? undefined,
    endBlock: filter.endBlock ?? undefined,
    fillTimeMin: filter.fillTimeMin ?? undefined,
    fillTimeMax: filter.fillTimeMax ?? undefined,
    appFeesAmountUsdMin: filter.appFeesAmountUsdMin ?? undefined,
    appFeesAmountUsdMax: filter.appFeesAmountUsdMax ?? undefined,
    refundFailReason: filter.refundFailReason ?? undefined,
    features: filter.features ?? undefined,
  };
}

/** `Query.requestStatus` (operation `getIntentStatus`): null for an unknown id. */
export const requestStatus: QueryResolvers['requestStatus'] = async (_parent, { requestId }, { core }) => {
  const status = await nullIfNotFound(getIntentStatus(core, { requestId }));
  return status === null ? null : { ...status, depositAddress: await statusDepositAddressOf(core, status.requestId) };
};

/** `Query.request` (operation `getRequests` with `id`): null for an unknown id. */
export const request: QueryResolvers['request'] = async (_parent, { id }, { core, caller: resolveCaller }) => {
  const caller = await resolveCaller();
  const { requests } = await getRequests(core, { id, limit: 1 }, caller);
  return requests[0] ?? null;
};

/** `Query.requests` (operation `getRequests`): a connection, newest first; `referrer` matches only the caller's requests. */
export const requests: QueryResolvers['requests'] = async (
  _parent,
  { filter, sortBy, sortDirection, first, after },
  { core, caller: resolveCaller },
) => {
  const caller = await resolveCaller();
  const params: GetRequestsParameters = {
    ...toFilterParameters(filter),
    sortBy: sortBy ?? undefined,
    sortDirection: sortDirection ?? undefined,
    limit: first ?? undefined,
    referrerScope: 'caller',
  };
  const page = await getRequests(core, { ...params, after: after ?? undefined }, caller);
  return { page, params, caller };
};

/** Field resolvers where the schema's shape differs from the core's. */
export const requestTypeResolvers: Pick<Resolvers, 'Request' | 'RequestTransaction' | 'RequestConnection'> = {
  Request: {
    slippageTolerance: (view) => view.slippageToleranceBps,
    referrer: (view) => view.owner?.referrer ?? null,
    createdAt: (view) => new Date(view.createdAt),
    updatedAt: (view) => new Date(view.updatedAt),
  },
  RequestTransaction: {
    // Unix seconds in the core.
    timestamp: (tx) => new Date(tx.timestamp * 1000),
  },
  RequestConnection: {
    edges: ({ page }) => page.requests.map((node, index) => ({ node, cursor: page.cursors[index]! })),
    pageInfo: ({ page }) => ({ hasNextPage: page.continuation !== undefined, endCursor: page.cursors.at(-1) ?? null }),
    totalCount: ({ params, caller }, _args, { core }) => countMatchingRequests(core, params, caller),
  },
};
