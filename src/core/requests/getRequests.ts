import { depositAddressesOfRequests } from '../../store/depositAddresses.repository.js';
import type { RequestRecord } from '../../records/request.js';
import type { ListRequestsFilters, RequestSortBy, SortDirection } from '../../store/listRequests.repository.js';
import { requestStatuses, type RequestStatus } from '../../records/requestStatus.js';
import type { CoreContext } from '../context.js';
import type { Caller } from '../vocabulary/caller.js';
import { scopeForCaller, type KeyScope } from './access.js';
import { presentRequest } from './presentRequest.js';
import { countRequests, fetchPage, pageSize, storeTimeFilters, type PageQuery } from './requestPages.js';
import { parseChainId } from '../inputs.js';
import { parseRequestId } from '../vocabulary/requestId.js';
import { checkAddressFilter, searchFilters, type RequestSearchParameters } from './searchFilters.js';
import { NO_REASON } from './statusRules.js';
import { loadRequestTransactions } from './transactions.js';
import type { RequestView } from './types.js';

export interface GetRequestsParameters extends RequestSearchParameters {
  /** Page size, 1 to 50; default 20. */
  limit?: number | undefined;
  /** REST: the `continuation` of the previous page. */
  continuation?: string | undefined;
  /** GraphQL: the cursor of the edge to continue after. */
  after?: string | undefined;
  /** The paying user (sender). */
  user?: string | undefined;
  id?: string | undefined;
  originChainId?: number | undefined;
  destinationChainId?: number | undefined;
  /** Either direction; ignored when `originChainId` or `destinationChainId` is given. */
  chainId?: number | undefined;
  status?: RequestStatus | readonly RequestStatus[] | undefined;
  /** Bounds of `createdAt` (of `updatedAt` with `sortBy: 'updatedAt'`), Unix ms, inclusive. */
  from?: number | undefined;
  to?: number | undefined;
  referrer?: string | undefined;
  /** API keys (or key ids) whose requests to list; each must be the caller's own. */
  apiKeys?: readonly string[] | undefined;
  /** How `referrer` is authorized (see `ScopeParameters`); default `apiKeys` (REST). */
  referrerScope?: 'apiKeys' | 'caller';
  depositAddress?: string | undefined;
  orderId?: string | undefined;
  recipient?: string | undefined;
  /** A fail reason; `N/A` selects requests that did not fail. */
  failReason?: string | undefined;
  sortBy?: RequestSortBy | undefined;
  sortDirection?: SortDirection | undefined;
  /** Count the matching requests (one bounded count: at most `maxCountedRequests`, 10,000). */
  includeTotal?: boolean | undefined;
}

export interface GetRequestsReturnType {
  requests: RequestView[];
  /** Pass back as `continuation` for the next page; undefined on the last page. */
  continuation: string | undefined;
  /** Edge cursors (GraphQL): `cursors[i]` continues after `requests[i]`. */
  cursors: string[];
  /** Number of matching requests, with `includeTotal`. */
  total?: number;
}

/**
 * The request history (`GET /requests/v3`, GraphQL `request` and `requests`): newest first by default, with
 * keyset pagination that neither repeats nor skips rows between pages. Fees come from the stored breakdown;
 * transactions from the recorded hashes; the referrer, API key name and platform fee only for the caller's
 * own requests.
 *
 * @throws `INVALID_INPUT` (400) for a bad id, page size, cursor, a `referrer` without `apiKey`, or a filter
 *   the gateway cannot apply yet; `UNAUTHORIZED` (401) / `FORBIDDEN` (403) for `apiKey` without the owner's
 *   `x-api-key` / naming another key.
 */
export async function getRequests(
  ctx: CoreContext,
  params: GetRequestsParameters,
  caller: Caller,
): Promise<GetRequestsReturnType> {
  const { query, scope } = await prepare(ctx, params, caller);
  const [page, total] = await Promise.all([
    fetchPage(ctx, query, { continuation: params.continuation, after: params.after }),
    params.includeTotal === true ? countRequests(ctx, query) : Promise.resolve(undefined),
  ]);
  return {
    requests: await presentAll(ctx, page.records, scope),
    continuation: page.continuation,
    cursors: page.cursors,
    ...(total === undefined ? {} : { total }),
  };
}

/**
 * The number of requests `getRequests` would list over all its pages, for a total asked after the page was
 * read (GraphQL `totalCount`, computed only when selected). Throws what `getRequests` throws.
 */
export async function countMatchingRequests(
  ctx: CoreContext,
  params: GetRequestsParameters,
  caller: Caller,
): Promise<number> {
  const { query } = await prepare(ctx, params, caller);
  return countRequests(ctx, query);
}

async function prepare(
  ctx: CoreContext,
  params: GetRequestsParameters,
  caller: Caller,
): Promise<{ query: PageQuery; scope: KeyScope }> {
  const search = searchFilters(ctx, params);
  const sortBy = params.sortBy ?? 'createdAt';
  const scope = await scopeForCaller(ctx, caller, {
    apiKeys: params.apiKeys,
    referrer: params.referrer,
    referrerScope: params.referrerScope ?? 'apiKeys',
  });
  const query: PageQuery = {
    filters: {
      ...storeFilters(params),
      ...search,
      ...(scope.apiKeyIds === undefined ? {} : { apiKeyId: scope.apiKeyIds }),
    },
    sortBy,
    // The reference's defaults: the newest first, the smallest amount first.
    sortDirection: params.sortDirection ?? (sortBy === 'amountUsd' ? 'asc' : 'desc'),
    limit: pageSize(params.limit),
    from: params.from,
    to: params.to,
  };
  return { query, scope };
}

/** Presents each request of a page (its transactions read for the whole page at once). */
async function presentAll(ctx: CoreContext, records: RequestRecord[], scope: KeyScope): Promise<RequestView[]> {
  const [addresses, transactions] = await Promise.all([
    depositAddressesOfRequests(
      ctx.db,
      records.filter((record) => record.depositAddress !== null).map((record) => record.id),
    ),
    loadRequestTransactions(ctx, records),
  ]);
  return records.map((record) =>
    presentRequest(ctx, record, {
      transactions: transactions.get(record.id)!,
      scope,
      depositAddress: addresses.get(record.id),
    }),
  );
}

const failedStatuses: readonly RequestStatus[] = ['failure', 'fallback', 'refund'];

/**
 * The store's filters for the client's. `failReason` follows the status rules: a reason is only reported on
 * failed statuses, so filtering by one also restricts to them, and `N/A` means "did not fail".
 */
export function storeFilters(
  params: Omit<GetRequestsParameters, 'status'> & { status?: RequestStatus | readonly RequestStatus[] | undefined },
): ListRequestsFilters {
  checkAddressFilter(params.user, 'user');
  checkAddressFilter(params.recipient, 'recipient');
  checkAddressFilter(params.depositAddress, 'depositAddress');
  let statuses: readonly RequestStatus[] | undefined =
    params.status === undefined ? undefined : typeof params.status === 'string' ? [params.status] : params.status;
  let failReason: string | undefined;
  if (params.failReason !== undefined) {
    const allowed =
      params.failReason === NO_REASON
        ? requestStatuses.filter((status) => !failedStatuses.includes(status))
        : failedStatuses;
    statuses = (statuses ?? requestStatuses).filter((status) => allowed.includes(status));
    if (params.failReason !== NO_REASON) failReason = params.failReason;
  }
  const filters: ListRequestsFilters = {
    ...storeTimeFilters(params.from, params.to),
    ...(statuses === undefined ? {} : { status: statuses }),
    ...(failReason === undefined ? {} : { failReason }),
  };
  if (params.user !== undefined) filters.user = params.user;
  if (params.id !== undefined) filters.id = parseRequestId(params.id, 'id');
  if (params.originChainId !== undefined) filters.originChainId = parseChainId(params.originChainId, 'originChainId');
  if (params.destinationChainId !== undefined)
    filters.destinationChainId = parseChainId(params.destinationChainId, 'destinationChainId');
  if (params.chainId !== undefined) filters.chainId = parseChainId(params.chainId, 'chainId');
  if (params.referrer !== undefined) filters.referrer = params.referrer;
  if (params.depositAddress !== undefined) filters.depositAddress = params.depositAddress;
  if (params.orderId !== undefined) filters.orderId = params.orderId;
  if (params.recipient !== undefined) filters.recipient = params.recipient;
  return filters;
}
