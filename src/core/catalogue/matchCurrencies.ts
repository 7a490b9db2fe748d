import type { Address } from 'viem';
import type { CurrencyConfig } from '../chains/types.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { chainCurrencies } from '../chains/requireChain.js';
import { parseChainId } from '../inputs.js';

/** A currency of the curated list, as `POST /currencies/*` and the GraphQL `currencies` field return it. */
export interface CurrencyListItem {
  /** Currency group id: the same asset on several chains shares it. */
  groupId: string;
  chainId: number;
  address: Address;
  symbol: string;
  name: string;
  decimals: number;
  vmType: 'evm';
  metadata: { logoURI: string; verified: boolean; isNative: boolean };
}

/** The filters of `POST /currencies/v1` and `/v2` (null and absent mean the same). */
export interface CurrencyFilter {
  /** Start from the default list (featured currencies); default: true unless the request searches. */
  defaultList?: boolean | null | undefined;
  /** Only these chains (empty = every chain). */
  chainIds?: readonly number[] | null | undefined;
  /** Case-insensitive: contained in the symbol or the name, or equal to the address. */
  term?: string | null | undefined;
  /** Case-insensitive address. */
  address?: string | null | undefined;
  /** Currency group id. */
  currencyId?: string | null | undefined;
  /** `chainId:address` items (empty = no restriction). */
  tokens?: readonly string[] | null | undefined;
  /** `true`: only verified currencies; `false` or absent: no restriction. */
  verified?: boolean | null | undefined;
  /** Also return every currency of a matched group, on every chain. */
  includeAllChains?: boolean | null | undefined;
  /**
   * Only currencies a deposit address can take: solver currencies (accepted as input) of chains with a
   * deposit-address factory (`docs/deposit-addresses.md`).
   */
  depositAddressOnly?: boolean | null | undefined;
  /** External search does not exist in this gateway; ignored. */
  useExternalSearch?: boolean | null | undefined;
}

const DEFAULT_CURRENCY_LIMIT = 20;
const MAX_CURRENCY_LIMIT = 100;

interface Listed {
  item: CurrencyListItem;
  featured: boolean;
  /** A deposit address on its chain can take it: a solver currency on a chain with a deposit-address factory. */
  depositAddress: boolean;
}

/**
 * Every currency of the curated list that matches `filter`, best first, without a limit: the list is the
 * configured currencies of every chain that is not hidden (native first, in configuration order). Requests
 * that search (`term`, `address`, `currencyId` or `tokens`) look at the whole list, the others at the default
 * list (featured currencies) unless `defaultList` says otherwise. With a `term`, currencies whose symbol or
 * address equals it come first. Shared by `getCurrencies` and `getCurrenciesV1`.
 *
 * @throws `INVALID_INPUT` (400) for a `tokens` item that is not `chainId:address`, or a chain id that is not a
 *   positive integer.
 */
export function matchCurrencies(ctx: CoreContext, filter: CurrencyFilter): CurrencyListItem[] {
  const tokens = parseTokens(filter.tokens);

  const term = normalize(filter.term);
  const address = normalize(filter.address);
  const currencyId = normalize(filter.currencyId);
  const chainIds =
    filter.chainIds && filter.chainIds.length > 0
      ? new Set(filter.chainIds.map((id, index) => parseChainId(id, `chainIds[${index}]`)))
      : undefined;
  const searching = term !== undefined || address !== undefined || currencyId !== undefined || tokens !== undefined;
  const defaultOnly = filter.defaultList ?? !searching;

  const pool = curatedList(ctx).filter(
    (entry) =>
      (!filter.verified || entry.item.metadata.verified) && (!filter.depositAddressOnly || entry.depositAddress),
  );
  const matches = (item: CurrencyListItem): boolean =>
    (chainIds === undefined || chainIds.has(item.chainId)) &&
    (address === undefined || item.address.toLowerCase() === address) &&
    (currencyId === undefined || item.groupId === currencyId) &&
    (tokens === undefined || tokens.has(`${item.chainId}:${item.address.toLowerCase()}`)) &&
    (term === undefined ||
      exact(item, term) ||
      item.symbol.toLowerCase().includes(term) ||
      item.name.toLowerCase().includes(term));

  const matched = pool
    .filter((entry) => (!defaultOnly || entry.featured) && matches(entry.item))
    .map(({ item }) => item);
  let result = matched;
  if (filter.includeAllChains) {
    const groups = new Set(matched.map((item) => item.groupId));
    result = pool.filter(({ item }) => groups.has(item.groupId)).map(({ item }) => item);
  }
  // Stable: exact hits first, the rest keep the list's order.
  return term === undefined
    ? result
    : [...result.filter((item) => exact(item, term)), ...result.filter((item) => !exact(item, term))];
}

/** The limit of a currency search: 1 to 100, 20 when absent. */
export function currencyLimit(limit: number | null | undefined): number {
  if (limit == null) return DEFAULT_CURRENCY_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_CURRENCY_LIMIT) {
    throw new GatewayError('INVALID_INPUT', `limit must be an integer from 1 to ${MAX_CURRENCY_LIMIT}`, {
      data: 'limit',
    });
  }
  return limit;
}

function curatedList(ctx: CoreContext): Listed[] {
  return ctx.config.chains
    .filter((chain) => !chain.hidden)
    .flatMap((chain) =>
      chainCurrencies(chain).map((currency) => ({
        ...toListed(chain.id, currency, currency === chain.nativeCurrency),
        depositAddress: currency.solver && chain.contracts.depositAddressFactory !== undefined,
      })),
    );
}

function toListed(chainId: number, currency: CurrencyConfig, isNative: boolean): Omit<Listed, 'depositAddress'> {
  return {
    featured: currency.featured,
    item: {
      groupId: currency.id,
      chainId,
      address: currency.address,
      symbol: currency.symbol,
      name: currency.name,
      decimals: currency.decimals,
      vmType: 'evm',
      metadata: { logoURI: currency.logoURI, verified: currency.verified, isNative },
    },
  };
}

const exact = (item: CurrencyListItem, term: string): boolean =>
  item.symbol.toLowerCase() === term || item.address.toLowerCase() === term;

function normalize(value: string | null | undefined): string | undefined {
  const trimmed = value?.trim().toLowerCase();
  return trimmed ? trimmed : undefined;
}

/** `chainId:address` items as a set of `chainId:lower-case address` keys; undefined when there are none. */
function parseTokens(tokens: readonly string[] | null | undefined): Set<string> | undefined {
  if (!tokens || tokens.length === 0) return undefined;
  return new Set(
    tokens.map((token) => {
      const match = /^([0-9]+):(.+)$/.exec(token.trim());
      if (!match)
        throw new GatewayError('INVALID_INPUT', `tokens item '${token}' is not chainId:address`, { data: 'tokens' });
      return `${Number(match[1])}:${match[2]!.trim().toLowerCase()}`;
    }),
  );
}
