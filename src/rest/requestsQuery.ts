import type { OperationInput } from '../../generated/openapi/operations.js';

/** The query of `GET /requests/v2`: its every parameter is one `/requests/v3` takes too (some with a v2 meaning). */
type SharedQuery = NonNullable<OperationInput<'getRequestsV2'>['query']>;

/** The comma-separated `apiKey` list of the reference, as items. */
export const splitList = (value: string | undefined): string[] | undefined =>
  value === undefined
    ? undefined
    : value
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item.length > 0);

/** Unix seconds of the contract's time bounds as the core's inclusive millisecond bounds. */
export const secondsToRange = (start: number | undefined, end: number | undefined) => ({
  from: start === undefined ? undefined : start * 1000,
  to: end === undefined ? undefined : end * 1000 + 999,
});

/**
 * The core's parameters for the query parameters both request lists take under one name (`GET /requests/v3` and
 * `/requests/v2`), mapped in this one place; each handler adds its own (v2's `user` and `hash` mean something else,
 * v3's search filters are its alone) and passes `sortBy` itself (v3's takes one value more).
 */
export function sharedRequestsParameters(
  query: Omit<SharedQuery, 'user' | 'hash' | 'status' | 'includeOrderData' | 'sortBy'>,
) {
  return {
    limit: query.limit,
    continuation: query.continuation,
    id: query.id,
    originChainId: query.originChainId,
    destinationChainId: query.destinationChainId,
    chainId: query.chainId,
    ...secondsToRange(query.startTimestamp, query.endTimestamp),
    startBlock: query.startBlock,
    endBlock: query.endBlock,
    referrer: query.referrer,
    apiKeys: splitList(query.apiKey),
    depositAddress: query.depositAddress,
    orderId: query.orderId,
    sortDirection: query.sortDirection,
  };
}
