import { depositAddressesOfRequests } from '../../store/depositAddresses.repository.js';
import type { RequestSortBy, SortDirection } from '../../store/listRequests.repository.js';
import type { JsonObject } from '../../records/json.js';
import type { CoreContext } from '../context.js';
import { scopeForApiKeys } from './access.js';
import { storeFilters } from './getRequests.js';
import { checkAddressFilter, searchFilters } from './searchFilters.js';
import { presentRequestV2 } from './presentRequest.js';
import { fetchPage, pageSize } from './requestPages.js';
import { statusesOfV2 } from './statusRules.js';
import { loadRequestTransactions } from './transactions.js';
import type { DeprecationNotice, RequestStatusV2, RequestViewV2 } from './types.js';

/**
 * `GET /requests/v2` is deprecated from the start in this gateway, on the reference's deprecation date, and
 * is served until the sunset date below (about six months after v3 shipped here); see docs/api-notes.md.
 */
export const requestsV2Deprecation: DeprecationNotice = {
  message:
    'GET /requests/v2 is deprecated and will stop being served at sunsetAt; use GET /requests/v3 (fees in data.fees).',
  deprecatedAt: Date.UTC(2026, 6, 22),
  sunsetAt: Date.UTC(2027, 4, 24),
  successor: '/requests/v3',
  migrationGuide: '/documentation#getRequests',
  documentation: '/documentation#getRequestsV2',
};

export interface GetRequestsV2Parameters {
  limit?: number | undefined;
  continuation?: string | undefined;
  /** The sender or the recipient. */
  user?: string | undefined;
  /** Any recorded transaction hash (deposit, fill or refund). */
  hash?: string | undefined;
  id?: string | undefined;
  originChainId?: number | undefined;
  destinationChainId?: number | undefined;
  chainId?: number | undefined;
  /** A v2 status: `pending` also matches `submitted`, `refund` also `fallback`. */
  status?: RequestStatusV2 | undefined;
  /** Unix ms, inclusive. */
  from?: number | undefined;
  to?: number | undefined;
  /** Bounds of the claimed deposit's origin-chain block, inclusive. */
  startBlock?: number | undefined;
  endBlock?: number | undefined;
  referrer?: string | undefined;
  /** API keys (the keys themselves): presenting a key proves owning it. */
  apiKeys?: readonly string[] | undefined;
  depositAddress?: string | undefined;
  orderId?: string | undefined;
  includeOrderData?: boolean | undefined;
  sortBy?: RequestSortBy | undefined;
  sortDirection?: SortDirection | undefined;
}

export interface GetRequestsV2ReturnType {
  requests: Array<RequestViewV2 & { orderData?: JsonObject | null }>;
  continuation: string | undefined;
  deprecation: DeprecationNotice;
}

/**
 * The earlier request history (`GET /requests/v2`, deprecated): the same requests and pagination as v3, in the
 * earlier shape (statuses `submitted` → `pending`, `fallback` → `refund`; fail reasons `N/A` when none; the fee
 * breakdown as `expandedPriceImpact` with the platform fee named `service`, plus the deprecated `fees`). Every
 * answer carries the deprecation notice.
 *
 * @throws `INVALID_INPUT` (400) for a bad id, page size, continuation or hash, an `apiKey` that is not a valid
 *   key, or a `referrer` without `apiKey`; `INVALID_ADDRESS` (400) for a `user` that is not an EVM address.
 */
export async function getRequestsV2(
  ctx: CoreContext,
  params: GetRequestsV2Parameters,
): Promise<GetRequestsV2ReturnType> {
  const scope = await scopeForApiKeys(ctx, { apiKeys: params.apiKeys, referrer: params.referrer });
  // v2's `user` is the sender or the recipient (the reference's meaning), and `hash` any recorded hash.
  const { status, user, hash, startBlock, endBlock, ...rest } = params;
  checkAddressFilter(user, 'user');
  const filters = {
    ...storeFilters({ ...rest, ...(status === undefined ? {} : { status: statusesOfV2(status) }) }),
    ...searchFilters(ctx, { txHash: hash, startBlock, endBlock }),
    ...(user === undefined ? {} : { userOrRecipient: user }),
    ...(scope.apiKeyIds === undefined ? {} : { apiKeyId: scope.apiKeyIds }),
  };
  const page = await fetchPage(
    ctx,
    {
      filters,
      sortBy: params.sortBy ?? 'createdAt',
      sortDirection: params.sortDirection ?? 'desc',
      limit: pageSize(params.limit),
      from: params.from,
      to: params.to,
    },
    { continuation: params.continuation },
  );
  const [addresses, transactions] = await Promise.all([
    depositAddressesOfRequests(
      ctx.db,
      page.records.filter((record) => record.depositAddress !== null).map((record) => record.id),
    ),
    loadRequestTransactions(ctx, page.records),
  ]);
  const requests = page.records.map((record) => {
    const view = presentRequestV2(ctx, record, {
      transactions: transactions.get(record.id)!,
      scope,
      depositAddress: addresses.get(record.id),
    });
    if (params.includeOrderData !== true) return view;
    // The order as stored with the quote: already its JSON wire form (amounts as decimal strings).
    const order = record.quote.order;
    const orderData =
      typeof order === 'object' && order !== null && !Array.isArray(order) ? order.orderData : undefined;
    return {
      ...view,
      orderData: typeof orderData === 'object' && orderData !== null && !Array.isArray(orderData) ? orderData : null,
    };
  });
  return { requests, continuation: page.continuation, deprecation: requestsV2Deprecation };
}
