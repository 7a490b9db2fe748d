import type { RequestRecord } from '../../records/request.js';
import {
  countRequests as countStoredRequests,
  decodeCursor,
  encodeCursor,
  listRequests,
  maxListRequestsLimit,
  type ListRequestsFilters,
  type ListRequestsOptions,
  type RequestSortBy,
  type SortDirection,
} from '../../store/listRequests.repository.js';
import { InvalidContinuationError } from '../../store/errors.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';

const defaultPageSize = 20;

/** Where a page starts: after a REST `continuation` (the store's keyset cursor) or after a GraphQL edge. */
export type PageStart = { continuation?: string | undefined; after?: string | undefined };

export interface PageQuery {
  filters: ListRequestsFilters;
  sortBy: RequestSortBy;
  sortDirection: SortDirection;
  /** 1 to 50. */
  limit: number;
  /** Exact bounds of the sort time, Unix ms inclusive (the store filters whole seconds; the rest is cut here). */
  from?: number | undefined;
  to?: number | undefined;
}

export interface Page {
  records: RequestRecord[];
  /** Edge cursors: `cursors[i]` continues after `records[i]`. */
  cursors: string[];
  /** The store's cursor of the next page; undefined on the last page. */
  continuation: string | undefined;
}

/** The page size of a call: the default, or a client's value checked against the contract's 1 to 50. */
export function pageSize(limit: number | undefined): number {
  if (limit === undefined) return defaultPageSize;
  if (!Number.isInteger(limit) || limit < 1 || limit > maxListRequestsLimit) {
    throw new GatewayError(
      'INVALID_INPUT',
      `The page size (limit; first in GraphQL) must be an integer from 1 to ${maxListRequestsLimit}, got ${limit}`,
      {
        data: 'limit',
      },
    );
  }
  return limit;
}

/** Whole-second store bounds for exact millisecond bounds (the store takes Unix seconds, inclusive). */
export function storeTimeFilters(
  from: number | undefined,
  to: number | undefined,
): Pick<ListRequestsFilters, 'startTimestamp' | 'endTimestamp'> {
  return {
    ...(from === undefined ? {} : { startTimestamp: Math.floor(from / 1000) }),
    ...(to === undefined ? {} : { endTimestamp: Math.floor(to / 1000) }),
  };
}

/** `listRequests`, with a continuation it refuses answered as the caller's mistake (`INVALID_INPUT`). */
async function listPage(ctx: CoreContext, query: PageQuery, options: ListRequestsOptions) {
  try {
    return await listRequests(ctx.db, query.filters, options);
  } catch (error) {
    if (error instanceof InvalidContinuationError) throw new GatewayError('INVALID_INPUT', error.message);
    throw error;
  }
}

/**
 * One page of requests. A GraphQL edge cursor is `{ c, o }`: the store cursor the edge's page started from
 * (null for the first page) and how many requests of that page come before the next one. The store only
 * hands out a cursor for a page's last row, so an edge in the middle of a page is addressed by that offset;
 * the last edge of a page that has a successor carries the store cursor itself (`o` = 0). Resuming at an
 * offset skips that many rows from the page start with one more keyset query.
 *
 * @throws `INVALID_INPUT` (400) for a malformed `after`, or (from the store) a malformed `continuation`.
 */
export async function fetchPage(ctx: CoreContext, query: PageQuery, start: PageStart): Promise<Page> {
  const sort = { sortBy: query.sortBy, sortDirection: query.sortDirection };
  let from = start.continuation;
  if (start.after !== undefined) {
    const cursor = decodeEdgeCursor(start.after);
    from = cursor.c ?? undefined;
    if (cursor.o > 0) {
      const skipped = await listPage(ctx, query, { ...sort, continuation: from, limit: cursor.o });
      if (skipped.continuation === undefined) return { records: [], cursors: [], continuation: undefined };
      from = skipped.continuation;
    }
  }
  const page = await listPage(ctx, query, { ...sort, continuation: from, limit: query.limit });
  const cursors = page.requests.map((_record, index) =>
    index === page.requests.length - 1 && page.continuation !== undefined
      ? encodeEdgeCursor({ c: page.continuation, o: 0 })
      : encodeEdgeCursor({ c: from ?? null, o: index + 1 }),
  );
  const inBounds = page.requests.map((record) => withinBounds(record, query));
  return {
    records: page.requests.filter((_record, index) => inBounds[index]),
    cursors: cursors.filter((_cursor, index) => inBounds[index]),
    continuation: page.continuation,
  };
}

/** The most requests a total counts: a larger total is reported as this number (`includeTotal`, `totalCount`). */
const maxCountedRequests = 10_000;

/**
 * How many requests match, over all pages: one bounded SQL count in the store (it visits at most
 * `maxCountedRequests` rows, so a total over a huge table costs the same as over 10,000); it runs only when a
 * client asks for the total.
 */
export async function countRequests(ctx: CoreContext, query: Omit<PageQuery, 'limit'>): Promise<number> {
  return countStoredRequests(ctx.db, query.filters, {
    sortBy: query.sortBy,
    from: query.from,
    to: query.to,
    cap: maxCountedRequests,
  });
}

function withinBounds(record: RequestRecord, query: Pick<PageQuery, 'sortBy' | 'from' | 'to'>): boolean {
  // The bounds are on `updatedAt` when sorting by it, else on `createdAt` (as the store's, `timeColumnOf`).
  const time = query.sortBy === 'updatedAt' ? record.updatedAt : record.createdAt;
  return (query.from === undefined || time >= query.from) && (query.to === undefined || time <= query.to);
}

interface EdgeCursor {
  c: string | null;
  o: number;
}

const encodeEdgeCursor = (cursor: EdgeCursor): string => encodeCursor(cursor);

function decodeEdgeCursor(value: string): EdgeCursor {
  const cursor = decodeCursor(value) as Partial<EdgeCursor> | undefined;
  if (
    typeof cursor !== 'object' ||
    cursor === null ||
    (cursor.c !== null && typeof cursor.c !== 'string') ||
    typeof cursor.o !== 'number' ||
    !Number.isInteger(cursor.o) ||
    cursor.o < 0 ||
    cursor.o > maxListRequestsLimit
  ) {
    throw new GatewayError(
      'INVALID_INPUT',
      'Invalid cursor: pass the cursor of an edge (or pageInfo.endCursor) unchanged',
      { data: 'after' },
    );
  }
  return { c: cursor.c, o: cursor.o };
}
