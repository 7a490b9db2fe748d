import { isAddress, type Address } from 'viem';
import type { CurrencyConfig } from '../chains/types.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import type { UsdPrice } from '../market.js';
import { chainCurrencies, requireChain } from '../chains/requireChain.js';

export interface GetTokenPriceParameters {
  chainId: number;
  /** Currency address in any letter case (the zero address is the native currency), or its symbol or id as quotes accept them. */
  address: string;
}

export interface GetTokenPriceReturnType {
  chainId: number;
  /** The currency's configured address. */
  address: Address;
  currency: CurrencyConfig;
  /** USD price of one whole unit. */
  price: UsdPrice;
}

/**
 * The USD price of one whole unit of a configured currency, from its price source (through the market's
 * short cache). Backs `GET /currencies/token/price` and the GraphQL `tokenPrice` field.
 *
 * @throws `UNSUPPORTED_CHAIN` (400) for a chain the gateway does not serve; `INVALID_ADDRESS` (400) when
 * `address` is neither an EVM address nor a symbol of the chain's currencies; `NOT_FOUND` (404) for a currency the chain does not list; the market's
 * `PRICE_FETCH_FAILED` (503), `UNSUPPORTED_CURRENCY` (400, no price source), `RPC_HTTP_ERROR` (502) or
 * `REQUEST_TIMED_OUT` (504) when the price cannot be read.
 */
export async function getTokenPrice(
  ctx: CoreContext,
  params: GetTokenPriceParameters,
): Promise<GetTokenPriceReturnType> {
  const chain = requireChain(ctx, params.chainId);
  const wanted = params.address.toLowerCase();
  const byAddress = isAddress(params.address, { strict: false });
  // Not an address: a symbol or currency id, as `POST /quote/v2` accepts for its currencies.
  const currency = chainCurrencies(chain).find((candidate) =>
    byAddress
      ? candidate.address.toLowerCase() === wanted
      : candidate.symbol.toLowerCase() === wanted || candidate.id === wanted,
  );
  if (currency === undefined && !byAddress) {
    throw new GatewayError(
      'INVALID_ADDRESS',
      `'${params.address}' is neither an EVM address nor the symbol of a currency of chain ${chain.id} (${chain.displayName})`,
    );
  }
  if (currency === undefined)
    throw new GatewayError('NOT_FOUND', `Currency ${params.address} is not listed on chain ${chain.id}`);
  const price = await ctx.market.usdPrice(chain.id, currency);
  return { chainId: chain.id, address: currency.address, currency, price };
}
