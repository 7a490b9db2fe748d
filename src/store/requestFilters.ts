import { sql, type Expression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { normalizeHex } from './mappers.js';
import type { Tables } from './tables.js';

/*
 * The request history's search filters beyond identity and time (the reference's `/requests/v3` parameters
 * `term`, the three transaction hashes, the currencies, `amountUsd` bounds, `requestType`, the block, fill-time
 * and app-fee bounds, `refundFailReason` and `features`, and v2's
 * "sender or recipient" and `hash`). Kept apart from `listRequests` so the keyset pagination there stays
 * readable; every filter here is a plain WHERE on `requests` (or an EXISTS on `outgoing_txs`), so pages
 * stay exact.
 */

/** A currency as the store keeps it: chain id and lower-case address. */
export interface StoredCurrency {
  chainId: number;
  address: string;
}

/** The operations a `requestType` names, with the chain relation it needs (`swap` splits in two). */
export interface RequestTypeFilter {
  operation: string;
  /** `same`: origin = destination; `cross`: they differ; undefined: either. */
  chains?: 'same' | 'cross';
}

export interface SearchRequestFilters {
  /** Request id, order id, any wallet (user, sender, recipient, refund address, deposit address) or any recorded hash. */
  term?: string;
  /** The user is the sender or the recipient (v2's `user`). */
  userOrRecipient?: string;
  /** Any recorded hash, deposit or outgoing (v2's `hash`). */
  txHash?: string;
  depositTxHash?: string;
  fillTxHash?: string;
  refundTxHash?: string;
  /** One of these currencies on the origin (an empty list matches nothing). */
  currencyIn?: readonly StoredCurrency[];
  currencyOut?: readonly StoredCurrency[];
  currencyInChainId?: number;
  currencyOutChainId?: number;
  /** Bounds of the input's USD value at quote time, micro-USD, inclusive. */
  amountUsdMinMicros?: bigint;
  amountUsdMaxMicros?: bigint;
  /** One of these request types (an empty list matches nothing). */
  requestTypes?: readonly RequestTypeFilter[];
  /** Bounds of the claimed deposit's origin-chain block, inclusive (`origin_block`). */
  startBlock?: number;
  endBlock?: number;
  /** Bounds of the fill time, milliseconds, inclusive (`fill_time_ms`: successful fills of claimed deposits only). */
  fillTimeMinMs?: number;
  fillTimeMaxMs?: number;
  /** Bounds of the app fees' USD value at quote time, micro-USD, inclusive (requests with app fees only). */
  appFeesUsdMinMicros?: bigint;
  appFeesUsdMaxMicros?: bigint;
  /** The recorded refund failure; null: none recorded. */
  refundFailReason?: string | null;
  /** Any of these features (an empty list matches nothing): see `featureMatches`. */
  features?: readonly RequestFeatureFilter[];
  /** A boolean combination of identity, chain, currency and status conditions (v3 `filters`): see `matches`. */
  matching?: FilterExpression;
}

/** The `requests` columns a `FilterExpression` compares as they are (values as stored: lower-case hex). */
export type FilterColumn =
  | 'id'
  | 'user_address'
  | 'deposit_address'
  | 'order_id'
  | 'status'
  | 'fail_reason'
  | 'refund_fail_reason'
  | 'origin_chain_id'
  | 'destination_chain_id';

/**
 * A condition on one request. `anyOf` an empty list matches nothing, `and` of none everything, `or` of none
 * nothing; `isNull` is the column's emptiness; `not` is true wherever its operand is false or unknown, so a
 * negated comparison with a null column matches (a request without a deposit address is "not" any address).
 */
export type FilterExpression =
  | { and: readonly FilterExpression[] }
  | { or: readonly FilterExpression[] }
  | { not: FilterExpression }
  | { column: FilterColumn; anyOf: readonly (string | number)[] }
  | { column: FilterColumn; isNull: true }
  | { recipientAnyOf: readonly string[] }
  | { currency: 'origin' | 'destination'; anyOf: readonly StoredCurrency[] }
  | { requestTypes: readonly RequestTypeFilter[] };

/** The features a request here can have (the reference's others are never set on one). */
export type RequestFeatureFilter = 'app_fees' | 'deposit_address' | 'gas_top_up';

type RequestsQuery<O> = SelectQueryBuilder<Tables, 'requests', O>;

const hashList = (hash: string) => JSON.stringify([normalizeHex(hash)]);

/**
 * The requests whose `column` (a JSON array of hashes) holds the hash in `list` (a JSON array of one), looked up in
 * a subquery and matched by primary key: `requests.id = any(array(select … where column @> list))`. Written as a
 * plain `column @> list`, the planner has to guess how many rows contain a hash: with the small statistics sample
 * PGlite's analyses take (`ANALYZE_STATISTICS_TARGET`: a histogram under 100 values) it assumes 1% of the table,
 * and a page of the newest then looks cheaper read by walking `created_at` backwards and testing every row: 90 ms at
 * 60,000 requests, 2.5 s at a million (`bench:growth`), for a hash that names one request. The subquery
 * has no order to keep, so it reads the column's partial GIN index (`requests_in_tx_hashes_idx`,
 * `requests_tx_hashes_idx`: non-empty lists only, hence the `<> '[]'`, which changes no row); the outer query sees
 * primary-key lookups, which it knows to be few.
 */
const hashesContain = (column: 'in_tx_hashes' | 'tx_hashes', list: string) =>
  sql<SqlBool>`${sql.ref('requests.id')} = any(array(select h.id from requests as h
    where ${sql.ref(`h.${column}`)} @> ${list}::jsonb and ${sql.ref(`h.${column}`)} <> '[]'::jsonb))`;

/**
 * `column = address` for the rows where that column is not the user, as its partial index holds them (`sender`,
 * `refund_to`, `recipient`: `where column <> user_address`); the predicate is repeated so the planner can use it.
 * With `user_address = address` beside it, the same rows as `column = address`.
 */
const besideUser = (column: 'sender' | 'refund_to' | 'recipient', address: string) =>
  sql<SqlBool>`(${sql.ref(column)} = ${address} and ${sql.ref(column)} <> user_address)`;

/** `recipient = address`, in the form the partial `requests_recipient_idx` and the user's index answer together. */
export const recipientIs = (eb: ExpressionBuilder<Tables, 'requests'>, address: string): Expression<SqlBool> =>
  eb.or([besideUser('recipient', address), eb.and([eb('user_address', '=', address), eb('recipient', '=', address)])]);

/** Adds the search filters to a query over `requests`. */
export function applySearchFilters<O>(query: RequestsQuery<O>, filters: SearchRequestFilters): RequestsQuery<O> {
  let q = query;
  if (filters.term !== undefined) {
    const term = filters.term.trim().toLowerCase();
    q = q.where((eb) =>
      eb.or([
        eb('id', '=', term),
        eb('order_id', '=', term),
        eb('user_address', '=', term),
        // `user_address = term` above covers the rows where these equal the user: the partial indexes hold the rest.
        besideUser('sender', term),
        besideUser('recipient', term),
        besideUser('refund_to', term),
        eb('deposit_address', '=', term),
        hashesContain('in_tx_hashes', JSON.stringify([term])),
        hashesContain('tx_hashes', JSON.stringify([term])),
      ]),
    );
  }
  if (filters.userOrRecipient !== undefined) {
    const address = normalizeHex(filters.userOrRecipient);
    q = q.where((eb) => eb.or([eb('user_address', '=', address), besideUser('recipient', address)]));
  }
  if (filters.txHash !== undefined) {
    const list = hashList(filters.txHash);
    q = q.where((eb) => eb.or([hashesContain('in_tx_hashes', list), hashesContain('tx_hashes', list)]));
  }
  if (filters.depositTxHash !== undefined) q = q.where(hashesContain('in_tx_hashes', hashList(filters.depositTxHash)));
  if (filters.fillTxHash !== undefined) q = q.where((eb) => outgoingWithHash(eb, 'fill', filters.fillTxHash!));
  if (filters.refundTxHash !== undefined) q = q.where((eb) => outgoingWithHash(eb, 'refund', filters.refundTxHash!));
  if (filters.currencyIn !== undefined)
    q = q.where((eb) => currencyMatch(eb, 'origin_chain_id', 'origin_currency', filters.currencyIn!));
  if (filters.currencyOut !== undefined) {
    q = q.where((eb) => currencyMatch(eb, 'destination_chain_id', 'destination_currency', filters.currencyOut!));
  }
  if (filters.currencyInChainId !== undefined) q = q.where('origin_chain_id', '=', filters.currencyInChainId);
  if (filters.currencyOutChainId !== undefined) q = q.where('destination_chain_id', '=', filters.currencyOutChainId);
  if (filters.amountUsdMinMicros !== undefined)
    q = q.where(sql<SqlBool>`volume_usd_micros >= ${filters.amountUsdMinMicros.toString()}::numeric`);
  if (filters.amountUsdMaxMicros !== undefined)
    q = q.where(sql<SqlBool>`volume_usd_micros <= ${filters.amountUsdMaxMicros.toString()}::numeric`);
  if (filters.requestTypes !== undefined) {
    const types = filters.requestTypes;
    q = q.where((eb) => requestTypeMatch(eb, types));
  }
  if (filters.startBlock !== undefined) q = q.where('origin_block', '>=', filters.startBlock);
  if (filters.endBlock !== undefined) q = q.where('origin_block', '<=', filters.endBlock);
  if (filters.fillTimeMinMs !== undefined) q = q.where('fill_time_ms', '>=', filters.fillTimeMinMs);
  if (filters.fillTimeMaxMs !== undefined) q = q.where('fill_time_ms', '<=', filters.fillTimeMaxMs);
  if (filters.appFeesUsdMinMicros !== undefined)
    q = q.where(sql<SqlBool>`app_fees_usd_micros >= ${filters.appFeesUsdMinMicros.toString()}::numeric`);
  if (filters.appFeesUsdMaxMicros !== undefined)
    q = q.where(sql<SqlBool>`app_fees_usd_micros <= ${filters.appFeesUsdMaxMicros.toString()}::numeric`);
  if (filters.refundFailReason !== undefined) {
    const reason = filters.refundFailReason;
    q = q.where((eb) =>
      reason === null ? eb('refund_fail_reason', 'is', null) : eb('refund_fail_reason', '=', reason),
    );
  }
  if (filters.matching !== undefined) {
    const expression = filters.matching;
    q = q.where((eb) => matches(eb, expression));
  }
  if (filters.features !== undefined) {
    const features = filters.features;
    q = q.where((eb) =>
      features.length === 0 ? sql<SqlBool>`false` : eb.or(features.map((f) => featureMatches(eb, f))),
    );
  }
  return q;
}

/**
 * The rows with a feature, by the rule the record's `features` follows (`presentRequest.ts`): app fees quoted
 * (`app_fees_usd_micros` is set exactly then), a deposit address, or a gas top-up stored with the quote (a
 * containment test on the `quote` document, not indexed: narrow it with another filter on a large history).
 */
function featureMatches(eb: ExpressionBuilder<Tables, 'requests'>, feature: RequestFeatureFilter): Expression<SqlBool> {
  switch (feature) {
    case 'app_fees':
      return eb('app_fees_usd_micros', 'is not', null);
    case 'deposit_address':
      return eb('deposit_address', 'is not', null);
    case 'gas_top_up':
      return sql<SqlBool>`requests.quote ? 'gasTopup'`;
  }
}

function outgoingWithHash(
  eb: ExpressionBuilder<Tables, 'requests'>,
  kind: 'fill' | 'refund',
  hash: string,
): Expression<SqlBool> {
  return eb.exists(
    eb
      .selectFrom('outgoing_txs')
      .select(sql`1`.as('one'))
      .whereRef('outgoing_txs.request_id', '=', 'requests.id')
      .where('outgoing_txs.kind', '=', kind)
      .where(sql<SqlBool>`outgoing_txs.hashes @> ${hashList(hash)}::jsonb`),
  );
}

function currencyMatch(
  eb: ExpressionBuilder<Tables, 'requests'>,
  chainColumn: 'origin_chain_id' | 'destination_chain_id',
  currencyColumn: 'origin_currency' | 'destination_currency',
  currencies: readonly StoredCurrency[],
): Expression<SqlBool> {
  if (currencies.length === 0) return sql<SqlBool>`false`;
  return eb.or(
    currencies.map((c) => eb.and([eb(chainColumn, '=', c.chainId), eb(currencyColumn, '=', normalizeHex(c.address))])),
  );
}

function requestTypeMatch(
  eb: ExpressionBuilder<Tables, 'requests'>,
  types: readonly RequestTypeFilter[],
): Expression<SqlBool> {
  if (types.length === 0) return sql<SqlBool>`false`;
  return eb.or(
    types.map((type) =>
      eb.and([
        eb('operation', '=', type.operation),
        ...(type.chains === undefined
          ? []
          : [eb('origin_chain_id', type.chains === 'same' ? '=' : '<>', eb.ref('destination_chain_id'))]),
      ]),
    ),
  );
}

/**
 * A `FilterExpression` as a parameterised condition. Comparisons are plain `column in (…)` (the address columns in
 * the forms their partial indexes answer), so a group that names an indexed value keeps its index; a negation is
 * `(…) is not true`, which no index answers and is only ever AND-ed beside other conditions by the groups' rule.
 */
function matches(eb: ExpressionBuilder<Tables, 'requests'>, expression: FilterExpression): Expression<SqlBool> {
  if ('and' in expression) {
    return expression.and.length === 0
      ? sql<SqlBool>`true`
      : eb.and(expression.and.map((operand) => matches(eb, operand)));
  }
  if ('or' in expression) {
    return expression.or.length === 0
      ? sql<SqlBool>`false`
      : eb.or(expression.or.map((operand) => matches(eb, operand)));
  }
  if ('not' in expression) return sql<SqlBool>`(${matches(eb, expression.not)}) is not true`;
  if ('recipientAnyOf' in expression) {
    const addresses = expression.recipientAnyOf;
    return addresses.length === 0
      ? sql<SqlBool>`false`
      : eb.or(addresses.map((address) => recipientIs(eb, normalizeHex(address))));
  }
  if ('currency' in expression) {
    return expression.currency === 'origin'
      ? currencyMatch(eb, 'origin_chain_id', 'origin_currency', expression.anyOf)
      : currencyMatch(eb, 'destination_chain_id', 'destination_currency', expression.anyOf);
  }
  if ('requestTypes' in expression) return requestTypeMatch(eb, expression.requestTypes);
  if ('isNull' in expression) return eb(expression.column, 'is', null);
  const values = expression.anyOf;
  if (values.length === 0) return sql<SqlBool>`false`;
  return eb(
    expression.column,
    'in',
    values.map((value) => (typeof value === 'string' ? normalizeHex(value) : value)),
  );
}
