import type { ChainConfig, CoreConfig, CurrencyConfig } from './types.js';
import { GatewayError } from '../errors.js';
import { parseChainId } from '../inputs.js';

/**
 * The configured chain `chainId`, hidden or not (hidden only keeps a chain out of the catalogue listings).
 *
 * @throws `INVALID_INPUT` (400) when `chainId` is not a positive integer, `UNSUPPORTED_CHAIN` (400) when the gateway
 *   does not serve the chain.
 */
export function requireChain(
  ctx: { config: Pick<CoreConfig, 'chains'> },
  chainId: number,
  role?: 'origin' | 'destination',
): ChainConfig {
  // The shape first (GraphQL's Int is signed): a negative or fractional id is bad input, not an unknown chain.
  parseChainId(chainId, role === undefined ? 'chainId' : `${role}ChainId`);
  const chain = ctx.config.chains.find((candidate) => candidate.id === chainId);
  if (!chain)
    throw new GatewayError(
      'UNSUPPORTED_CHAIN',
      `${role === undefined ? 'Chain' : `The ${role} chain`} ${chainId} is not supported by this gateway`,
    );
  return chain;
}

/** Every currency of a chain, the native one first. */
export const chainCurrencies = (chain: ChainConfig): CurrencyConfig[] => [chain.nativeCurrency, ...chain.currencies];

/** The currency of a chain at `address` (any casing), if the chain lists it. */
export function findCurrency(chain: ChainConfig, address: string): CurrencyConfig | undefined {
  const wanted = address.toLowerCase();
  return chainCurrencies(chain).find((currency) => currency.address.toLowerCase() === wanted);
}

/**
 * The currency of a chain at `address` (any casing).
 *
 * @throws `UNSUPPORTED_CURRENCY` (400) when the chain does not list it.
 */
export function requireCurrency(chain: ChainConfig, address: string): CurrencyConfig {
  const currency = findCurrency(chain, address);
  if (currency === undefined)
    throw new GatewayError('UNSUPPORTED_CURRENCY', `Currency ${address} is not supported on chain ${chain.id}`);
  return currency;
}
