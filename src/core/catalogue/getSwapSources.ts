import type { CoreContext } from '../context.js';
import { swapSourcesOf, swapSourcesOfAny } from '../chains/dexSources.js';
import { requireChain } from '../chains/requireChain.js';

export interface GetSwapSourcesParameters {
  /** Only sources available on this chain; without it, the sources of any configured chain. */
  chainId?: number | null | undefined;
}

export type GetSwapSourcesReturnType = string[];

/**
 * The swap sources quotes may include or exclude: the solver's own inventory (`SWAP_SOURCE`) on every chain, and
 * `uniswap-v3` / `uniswap-v2` on the chains whose `dex` configures them. Backs `GET /swap-sources` and
 * `Query.swapSources`.
 *
 * @throws `UNSUPPORTED_CHAIN` (400) when `chainId` names a chain the gateway does not serve.
 */
export function getSwapSources(ctx: CoreContext, params: GetSwapSourcesParameters = {}): GetSwapSourcesReturnType {
  if (params.chainId != null) return swapSourcesOf(requireChain(ctx, params.chainId));
  return swapSourcesOfAny(ctx.config.chains);
}
