import { formatUsdPrice } from '../../core/usd.js';
import { getCurrencies } from '../../core/catalogue/getCurrencies.js';
import { getSwapSources } from '../../core/catalogue/getSwapSources.js';
import { getTokenPrice } from '../../core/catalogue/getTokenPrice.js';
import type { QueryResolvers } from '../../../generated/graphql/resolvers.js';

/** `Query.tokenPrice` (operation `getTokenPrice`): the exact decimal price, where REST rounds to a JSON number. */
export const tokenPrice: QueryResolvers['tokenPrice'] = async (_parent, { chainId, address }, { core }) => {
  const result = await getTokenPrice(core, { chainId, address });
  return { chainId: result.chainId, address: result.address, price: formatUsdPrice(result.price) };
};

/** `Query.currencies` (operation `getCurrencies`): the flat list of `POST /currencies/v2`, with each group id. */
export const currencies: QueryResolvers['currencies'] = (_parent, { input }, { core }) =>
  getCurrencies(core, input ?? {});

/** `Query.swapSources` (operation `getSwapSources`): the names `GET /swap-sources` lists. */
export const swapSources: QueryResolvers['swapSources'] = (_parent, { chainId }, { core }) =>
  getSwapSources(core, { chainId });
