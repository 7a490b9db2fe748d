/**
 * The request history's lists: one page of requests matching the filters (GET /requests/v3 and /requests/v2), the
 * keyset cursor (`continuation`) that resumes it, and the bounded count of all pages.
 */
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import { InvalidContinuationError } from './errors.js';
import { normalizeHex } from './mappers.js';
import { applySearchFilters, recipientIs, type SearchRequestFilters } from './requestFilters.js';
import { toRequestRecord } from './requestRecord.js';
import type { RequestRecord } from '../records/request.js';
import type { RequestStatus } from '../records/requestStatus.js';
import type { Tables } from './tables.js';

/** Identity, time and status filters; the search filters are in `requestFilters.ts`. */
export interface ListRequestsFilters extends SearchRequestFilters {
  /** The paying user (`user_address`); the reference's v3 `user` means sender/depositor. */
  user?: string;
  id?: string;
  originChainId?: number;
  destinationChainId?: number;
  /** Either direction; ignored when `originChainId` or `destinationChainId` is given (as in the reference). */
  chainId?: number;
  status?: RequestStatus | readonly RequestStatus[];
  /** Unix seconds, inclusive, over `createdAt` (or `updatedAt` when sorting by it). */
  startTimestamp?: number;
  /** Unix seconds, inclusive of the whole second. */
  endTimestamp?: number;
  referrer?: string;
  /** One key or several (the reference's `apiKey` takes a comma list). */
  apiKeyId?: string | readonly string[];
  depositAddress?: string;
  orderId?: string;
  recipient?: string;
  failReason?: string;
}

/** `amountUsd`: the input's USD value at quote time (`volume_usd_micros`), ties broken by id like the times. */
export type RequestSortBy = 'createdAt' | 'updatedAt' | 'amountUsd';
export type SortDirection = 'asc' | 'desc';

export interface ListRequestsOptions {
  /** 1 to 50 (the reference's maximum); default 20. Out-of-range values are clamped. */
  limit?: number;
  /** The `continuation` of the previous page, unchanged. */
  continuation?: string;
  sortBy?: RequestSortBy;
  sortDirection?: SortDirection;
}

export interface ListRequestsResult {
  requests: RequestRecord[];
  /** Present when more rows follow; pass it back with the same filters and sort. */
  continuation: string | undefined;
}

export const maxListRequestsLimit = 50;
const defaultListRequestsLimit = 20;

/**
 * One page of requests matching `filters`, for GET /requests/v3 and /requests/v2. Keyset pagination on
 * (sort key, id): stable under equal timestamps and under inserts between pages. Throws
 * `InvalidContinuationError` for a continuation that is malformed or was made for another sort.
 */
export async function listRequests(
  db: Kysely<Tables>,
  filters: ListRequestsFilters,
  options: ListRequestsOptions = {},
): Promise<ListRequestsResult> {
  const sortBy = options.sortBy ?? 'createdAt';
  const direction = options.sortDirection ?? 'desc';
  const limit = Math.min(Math.max(Math.trunc(options.limit ?? defaultListRequestsLimit), 1), maxListRequestsLimit);
  const sortColumn = sortColumns[sortBy];

  let query = whereListFilters(db.selectFrom('requests').selectAll(), filters, timeColumnOf(sortBy));

  if (options.continuation !== undefined) {
    const after = decodeContinuation(options.continuation, sortBy, direction);
    // The key is cast to the column's type: a decimal string for `amountUsd`, Unix ms otherwise.
    const key = sortBy === 'amountUsd' ? sql`${after.key}::numeric` : sql`${after.key}::bigint`;
    query = query.where(
      sql<boolean>`(${sql.ref(sortColumn)}, id) ${sql.raw(direction === 'desc' ? '<' : '>')} (${key}, ${after.id})`,
    );
  }

  const rows = await query
    .orderBy(sortColumn, direction)
    .orderBy('id', direction)
    .limit(limit + 1)
    .execute();
  const requests = rows.slice(0, limit).map(toRequestRecord);
  const last = requests.at(-1);
  const continuation =
    rows.length > limit && last !== undefined
      ? encodeContinuation({
          s: sortBy,
          d: direction,
          k:
            sortBy === 'amountUsd'
              ? last.volumeUsdMicros.toString()
              : sortBy === 'createdAt'
                ? last.createdAt
                : last.updatedAt,
          i: last.id,
        })
      : undefined;
  return { requests, continuation };
}

export interface CountRequestsOptions {
  sortBy?: RequestSortBy;
  /** Exact bounds of the sort time, Unix ms inclusive (on top of the filters' whole-second bounds). */
  from?: number | undefined;
  to?: number | undefined;
  /** Stop counting here: the answer is at most `cap` (the bound of the work one count may do). */
  cap: number;
}

/**
 * How many requests `listRequests` would list over all its pages with these filters, counted by one bounded
 * SQL query (`select count(*) from (select 1 ... limit cap)`): at most `cap` rows are visited, whatever the
 * table's size. Returns at most `cap`.
 */
export async function countRequests(
  db: Kysely<Tables>,
  filters: ListRequestsFilters,
  options: CountRequestsOptions,
): Promise<number> {
  const timeColumn = timeColumnOf(options.sortBy ?? 'createdAt');
  let inner = whereListFilters(db.selectFrom('requests').select(sql<number>`1`.as('one')), filters, timeColumn);
  if (options.from !== undefined) inner = inner.where(timeColumn, '>=', options.from);
  if (options.to !== undefined) inner = inner.where(timeColumn, '<=', options.to);
  const cap = Math.max(Math.trunc(options.cap), 0);
  const row = await db
    .selectFrom(inner.limit(cap).as('matching'))
    .select((eb) => eb.fn.countAll<string | number | bigint>().as('total'))
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

type RequestsQuery<O> = SelectQueryBuilder<Tables, 'requests', O>;

const sortColumns = {
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  amountUsd: 'volume_usd_micros',
} as const satisfies Record<RequestSortBy, string>;

/** The time the timestamp bounds apply to: `updatedAt` when sorting by it, else `createdAt` (as the reference). */
export const timeColumnOf = (sortBy: RequestSortBy): 'created_at' | 'updated_at' =>
  sortBy === 'updatedAt' ? 'updated_at' : 'created_at';

/** The WHERE clauses of the listing filters, shared by `listRequests` and `countRequests`. */
function whereListFilters<O>(
  base: RequestsQuery<O>,
  filters: ListRequestsFilters,
  timeColumn: 'created_at' | 'updated_at',
): RequestsQuery<O> {
  let query = base;
  if (filters.user !== undefined) query = query.where('user_address', '=', normalizeHex(filters.user));
  if (filters.id !== undefined) query = query.where('id', '=', normalizeHex(filters.id));
  if (filters.originChainId !== undefined) query = query.where('origin_chain_id', '=', filters.originChainId);
  if (filters.destinationChainId !== undefined) {
    query = query.where('destination_chain_id', '=', filters.destinationChainId);
  }
  if (
    filters.chainId !== undefined &&
    filters.originChainId === undefined &&
    filters.destinationChainId === undefined
  ) {
    const chainId = filters.chainId;
    query = query.where((eb) => eb.or([eb('origin_chain_id', '=', chainId), eb('destination_chain_id', '=', chainId)]));
  }
  if (filters.status !== undefined) {
    const statuses: readonly RequestStatus[] = typeof filters.status === 'string' ? [filters.status] : filters.status;
    query = statuses.length === 0 ? query.where(sql<boolean>`false`) : query.where('status', 'in', statuses);
  }
  if (filters.startTimestamp !== undefined) {
    query = query.where(timeColumn, '>=', Math.floor(filters.startTimestamp) * 1000);
  }
  if (filters.endTimestamp !== undefined) {
    query = query.where(timeColumn, '<', (Math.floor(filters.endTimestamp) + 1) * 1000);
  }
  if (filters.referrer !== undefined) query = query.where('referrer', '=', filters.referrer);
  if (filters.apiKeyId !== undefined) {
    const keys: readonly string[] = typeof filters.apiKeyId === 'string' ? [filters.apiKeyId] : filters.apiKeyId;
    query = keys.length === 0 ? query.where(sql<boolean>`false`) : query.where('api_key_id', 'in', keys);
  }
  if (filters.depositAddress !== undefined) {
    query = query.where('deposit_address', '=', normalizeHex(filters.depositAddress));
  }
  if (filters.orderId !== undefined) query = query.where('order_id', '=', normalizeHex(filters.orderId));
  if (filters.recipient !== undefined) {
    const recipient = normalizeHex(filters.recipient);
    query = query.where((eb) => recipientIs(eb, recipient));
  }
  if (filters.failReason !== undefined) query = query.where('fail_reason', '=', filters.failReason);
  return applySearchFilters(query, filters);
}

interface Continuation {
  s: RequestSortBy;
  d: SortDirection;
  /** Unix ms of the time sorts; micro-USD as a decimal string for `amountUsd`. */
  k: number | string;
  i: string;
}

const encodeContinuation = (c: Continuation): string => encodeCursor(c);

function decodeContinuation(
  value: string,
  sortBy: RequestSortBy,
  direction: SortDirection,
): { key: number | string; id: string } {
  const c = decodeCursor(value) as Partial<Continuation> | undefined;
  const validKey =
    typeof c?.k === 'number' ? Number.isSafeInteger(c.k) : typeof c?.k === 'string' && /^\d{1,78}$/.test(c.k);
  if (typeof c !== 'object' || c === null || !validKey || typeof c.i !== 'string') {
    throw new InvalidContinuationError('Invalid continuation');
  }
  if (c.s !== sortBy || c.d !== direction) {
    throw new InvalidContinuationError('The continuation was made for another sortBy or sortDirection');
  }
  if (typeof c.k !== (sortBy === 'amountUsd' ? 'string' : 'number'))
    throw new InvalidContinuationError('Invalid continuation');
  return { key: c.k!, id: c.i };
}

/** A cursor as clients get it: JSON in base64url, opaque to them (the listing's `continuation`, GraphQL's edges). */
export const encodeCursor = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** What `encodeCursor` encoded, or undefined when `value` is not base64url JSON; the caller checks its shape. */
export function decodeCursor(value: string): unknown {
  try {
    return JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}
