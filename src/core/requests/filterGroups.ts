import { isAddress } from 'viem';
import type { FilterColumn, FilterExpression, RequestTypeFilter, StoredCurrency } from '../../store/requestFilters.js';
import { requestStatuses } from '../../records/requestStatus.js';
import { chainCurrencies } from '../chains/requireChain.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { NO_REASON } from './statusRules.js';

/*
 * The reference's `/requests/v3` `filters`: a JSON array of groups, each an object whose keys are AND-ed, the
 * groups OR-ed, the whole AND-ed with the top-level parameters. A key prefixed `not:` is negated; an array value
 * is any of its items; `null` is "the field is empty" (`not:` of it: present). Groups take the identity, chain,
 * currency and status keys; ranges and `features` stay top-level, as on the reference. The sizes are bounded so
 * that a query stays a handful of indexed comparisons.
 */

/** Groups in one `filters`. */
export const maxFilterGroups = 10;
/** Items in one array value. */
export const maxFilterValues = 20;
/** Values over all groups together (each key counts one, each array item one). */
export const maxFilterTerms = 100;

/** The keys the reference keeps to the top level: a group naming one is refused rather than read some other way. */
const topLevelOnly = new Set([
  'startTimestamp',
  'endTimestamp',
  'startBlock',
  'endBlock',
  'amountUsdMin',
  'amountUsdMax',
  'appFeesAmountUsdMin',
  'appFeesAmountUsdMax',
  'fillTimeMin',
  'fillTimeMax',
  'features',
]);

type Value = string | number;

interface KeyRule {
  /** Whether a value is one this key takes (strings or numbers as the key compares). */
  accepts: (value: unknown) => value is Value;
  /** The condition "any of these values". */
  anyOf: (values: readonly Value[], ctx: CoreContext) => FilterExpression;
  /** The condition "empty"; keys over columns that are never empty match nothing. */
  empty: FilterExpression;
  /** What a value must be, for the error. */
  expected: string;
}

const nothing: FilterExpression = { or: [] };
const isAddressValue = (value: unknown): value is string =>
  typeof value === 'string' && isAddress(value, { strict: false });
const isBytes32 = (value: unknown): value is string => typeof value === 'string' && /^0x[0-9a-fA-F]{64}$/.test(value);
const isChainId = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
const isReason = (value: unknown): value is string =>
  typeof value === 'string' && /^(N\/A|[A-Z0-9_]{1,64})$/.test(value);
const isText = (value: unknown): value is string => typeof value === 'string' && value.length > 0 && value.length <= 64;

const column = (name: FilterColumn, expected: string, accepts: KeyRule['accepts'], nullable = false): KeyRule => ({
  accepts,
  anyOf: (values) => ({ column: name, anyOf: values }),
  empty: nullable ? { column: name, isNull: true } : nothing,
  expected,
});

/** The statuses on which a fail reason is reported (the fail-reason rule of the top-level `failReason`). */
const failedStatuses = ['failure', 'fallback', 'refund'];

/** The reference's `requestType` names (any letter case) as the store's operations. */
export const requestTypes: Record<string, RequestTypeFilter> = {
  bridge: { operation: 'bridge' },
  'crosschain swap': { operation: 'swap', chains: 'cross' },
  'same-chain swap': { operation: 'swap', chains: 'same' },
  send: { operation: 'send' },
  wrap: { operation: 'wrap' },
  unwrap: { operation: 'unwrap' },
  call: { operation: 'call' },
};

/** The currencies with one of these addresses (on any chain) or symbols (any letter case). */
function currenciesOf(ctx: CoreContext, by: 'address' | 'symbol', values: readonly Value[]): StoredCurrency[] {
  const wanted = new Set(values.map((value) => String(value).toLowerCase()));
  if (by === 'address') {
    // Every chain, as the top-level address filter: a delisted token is still a request's currency.
    return ctx.config.chains.flatMap((chain) => [...wanted].map((address) => ({ chainId: chain.id, address })));
  }
  const matches: StoredCurrency[] = [];
  for (const chain of ctx.config.chains) {
    for (const currency of chainCurrencies(chain)) {
      if (wanted.has(currency.symbol.toLowerCase()))
        matches.push({ chainId: chain.id, address: currency.address.toLowerCase() });
    }
  }
  return matches;
}

const keyRules: Record<string, KeyRule> = {
  id: column('id', 'a request id (0x and 64 hex digits)', isBytes32),
  orderId: column('order_id', 'an order id (0x and 64 hex digits)', isBytes32),
  user: column('user_address', 'an EVM address', isAddressValue),
  depositAddress: column('deposit_address', 'an EVM address', isAddressValue, true),
  recipient: {
    accepts: isAddressValue,
    anyOf: (values) => ({ recipientAnyOf: values as string[] }),
    empty: nothing,
    expected: 'an EVM address',
  },
  originChainId: column('origin_chain_id', 'a chain id', isChainId),
  destinationChainId: column('destination_chain_id', 'a chain id', isChainId),
  currencyInChainId: column('origin_chain_id', 'a chain id', isChainId),
  currencyOutChainId: column('destination_chain_id', 'a chain id', isChainId),
  chainId: {
    accepts: isChainId,
    anyOf: (values) => ({
      or: [
        { column: 'origin_chain_id', anyOf: values },
        { column: 'destination_chain_id', anyOf: values },
      ],
    }),
    empty: nothing,
    expected: 'a chain id',
  },
  currencyInAddress: {
    accepts: isAddressValue,
    anyOf: (values, ctx) => ({ currency: 'origin', anyOf: currenciesOf(ctx, 'address', values) }),
    empty: nothing,
    expected: 'an EVM address',
  },
  currencyOutAddress: {
    accepts: isAddressValue,
    anyOf: (values, ctx) => ({ currency: 'destination', anyOf: currenciesOf(ctx, 'address', values) }),
    empty: nothing,
    expected: 'an EVM address',
  },
  currencyInSymbol: {
    accepts: isText,
    anyOf: (values, ctx) => ({ currency: 'origin', anyOf: currenciesOf(ctx, 'symbol', values) }),
    empty: nothing,
    expected: 'a currency symbol',
  },
  currencyOutSymbol: {
    accepts: isText,
    anyOf: (values, ctx) => ({ currency: 'destination', anyOf: currenciesOf(ctx, 'symbol', values) }),
    empty: nothing,
    expected: 'a currency symbol',
  },
  status: column(
    'status',
    `one of ${requestStatuses.join(', ')}`,
    (value): value is string => typeof value === 'string' && (requestStatuses as readonly string[]).includes(value),
  ),
  // The top-level rule: a reason is reported on the failed statuses only, `N/A` on every other.
  failReason: {
    accepts: isReason,
    anyOf: (values) => {
      const reasons = values.filter((value) => value !== NO_REASON);
      const failed: FilterExpression = { column: 'status', anyOf: failedStatuses };
      const any: FilterExpression[] = [];
      if (reasons.length < values.length) any.push({ not: failed });
      if (reasons.length > 0) any.push({ and: [failed, { column: 'fail_reason', anyOf: reasons }] });
      return { or: any };
    },
    empty: { not: { column: 'status', anyOf: failedStatuses } },
    expected: 'a fail reason',
  },
  refundFailReason: {
    accepts: isReason,
    anyOf: (values) => {
      const reasons = values.filter((value) => value !== NO_REASON);
      const any: FilterExpression[] = [];
      if (reasons.length < values.length) any.push({ column: 'refund_fail_reason', isNull: true });
      if (reasons.length > 0) any.push({ column: 'refund_fail_reason', anyOf: reasons });
      return { or: any };
    },
    empty: { column: 'refund_fail_reason', isNull: true },
    expected: 'a refund fail reason',
  },
  requestType: {
    accepts: (value): value is string =>
      typeof value === 'string' && Object.hasOwn(requestTypes, value.trim().toLowerCase()),
    anyOf: (values) => ({ requestTypes: values.map((value) => requestTypes[String(value).trim().toLowerCase()]!) }),
    empty: nothing,
    expected: 'one of Bridge, Crosschain Swap, Same-chain Swap, Send, Wrap, Unwrap, Call',
  },
};

/** The keys a group takes, for documentation and errors. */
export const filterGroupKeys = Object.keys(keyRules);

const refuse = (message: string): never => {
  throw new GatewayError('INVALID_INPUT', `filters: ${message}`, { data: 'filters' });
};

/**
 * The store condition of a `filters` value: the OR of its groups, each the AND of its keys.
 *
 * @throws `INVALID_INPUT` (400) naming `filters` for text that is not a JSON array of objects, an empty array or
 *   group, an unknown or top-level-only key, a value the key does not take, `null` mixed with values in one array,
 *   or more than `maxFilterGroups` groups, `maxFilterValues` items in an array or `maxFilterTerms` values in all.
 */
export function parseFilterGroups(ctx: CoreContext, text: string): FilterExpression {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return refuse('must be a JSON-encoded array of filter objects');
  }
  if (!Array.isArray(parsed) || parsed.length === 0) return refuse('must be a non-empty JSON array of filter objects');
  if (parsed.length > maxFilterGroups) return refuse(`at most ${maxFilterGroups} groups, got ${parsed.length}`);
  let terms = 0;
  const groups = parsed.map((group: unknown, index): FilterExpression => {
    if (typeof group !== 'object' || group === null || Array.isArray(group))
      return refuse(`group ${index} must be an object`);
    const entries = Object.entries(group);
    if (entries.length === 0) return refuse(`group ${index} has no keys`);
    return {
      and: entries.map(([rawKey, value]): FilterExpression => {
        const negated = rawKey.startsWith('not:');
        const key = negated ? rawKey.slice('not:'.length) : rawKey;
        if (topLevelOnly.has(key)) return refuse(`${key} is a top-level parameter only, not a group key`);
        const rule = Object.hasOwn(keyRules, key) ? keyRules[key]! : refuse(`unknown key '${rawKey.slice(0, 64)}'`);
        const items: unknown[] = Array.isArray(value) ? value : [value];
        if (items.length === 0) return refuse(`${rawKey} has an empty array`);
        if (items.length > maxFilterValues) return refuse(`${rawKey} has more than ${maxFilterValues} values`);
        terms += items.length;
        if (terms > maxFilterTerms) return refuse(`more than ${maxFilterTerms} values in all`);
        const nulls = items.filter((item) => item === null).length;
        if (nulls > 0 && nulls < items.length) return refuse(`${rawKey} mixes null with values`);
        let condition: FilterExpression;
        if (nulls > 0) condition = rule.empty;
        else {
          for (const item of items) {
            if (!rule.accepts(item)) return refuse(`${rawKey} must be ${rule.expected}`);
          }
          condition = rule.anyOf(items as Value[], ctx);
        }
        return negated ? { not: condition } : condition;
      }),
    };
  });
  return { or: groups };
}
