import type { CoreContext } from '../context.js';
import { SWAP_SOURCE } from '../settings.js';
import { requireChain } from '../chains/requireChain.js';

export interface GetSwapSourcesParameters {
  /** Only sources available on this chain; every configured chain has the same one. */
  chainId?: number | null | undefined;
}

export type GetSwapSourcesReturnType = string[];

/**
 * The swap sources quotes may include or exclude: this gateway has one, the solver's own inventory
 * (`SWAP_SOURCE`), on every chain it serves. Backs `GET /swap-sources`.
 *
 * @throws `UNSUPPORTED_CHAIN` (400) when `chainId` names a chain the gateway does not serve.
 */
export function getSwapSources(ctx: CoreContext, params: GetSwapSourcesParameters = {}): GetSwapSourcesReturnType {
  if (params.chainId != null) requireChain(ctx, params.chainId);
  return [SWAP_SOURCE];
}
