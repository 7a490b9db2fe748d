/**
 * Finds the pools among a set of tokens through the factories (`getPool` for each v3 fee tier, `getPair`), with
 * each fee tier's tick spacing, in one `aggregate3`. Pools are static: this runs when the book starts and whenever
 * the operator asks for it, not per block.
 */
import { zeroAddress, type Address, type PublicClient } from 'viem';
import { addressAt, intAt, multicallAt, SELECTORS, wordOfAddress, wordOfInt, type PoolCall } from './poolCalls.js';
import type { PoolInfo } from './readPoolStates.js';

/** The fee tiers Uniswap v3's factory enables at deployment, in hundredths of a bip. */
export const V3_FEE_TIERS: readonly number[] = [100, 500, 3000, 10000];

export interface DiscoverPoolsParameters {
  client: Pick<PublicClient, 'request'>;
  multicall3: Address;
  tokens: readonly Address[];
  v3Factory?: Address;
  v2Factory?: Address;
  feeTiers?: readonly number[];
}

/** Every pool of the factories between two of `tokens` (addresses lower-case, token0 < token1). */
export async function discoverPools(params: DiscoverPoolsParameters): Promise<PoolInfo[]> {
  const { client, multicall3, v3Factory, v2Factory } = params;
  const feeTiers = params.feeTiers ?? V3_FEE_TIERS;
  const tokens = [...new Set(params.tokens.map((t) => t.toLowerCase() as Address))].sort();
  const calls: PoolCall[] = [];
  const takes: ((data: `0x${string}` | undefined) => void)[] = [];
  const spacing = new Map<number, number>();
  const found: PoolInfo[] = [];
  const pendingV3: { address: Address; token0: Address; token1: Address; fee: number }[] = [];

  if (v3Factory !== undefined) {
    for (const fee of feeTiers) {
      calls.push({ target: v3Factory, callData: `${SELECTORS.feeAmountTickSpacing}${wordOfInt(fee)}` });
      takes.push((data) => {
        const value = data === undefined ? undefined : intAt(data, 0);
        if (value !== undefined && value > 0n) spacing.set(fee, Number(value));
      });
    }
  }
  for (let i = 0; i < tokens.length; i++) {
    for (let j = i + 1; j < tokens.length; j++) {
      const [token0, token1] = [tokens[i]!, tokens[j]!];
      const pair = `${wordOfAddress(token0)}${wordOfAddress(token1)}`;
      if (v3Factory !== undefined) {
        for (const fee of feeTiers) {
          calls.push({ target: v3Factory, callData: `${SELECTORS.getPool}${pair}${wordOfInt(fee)}` });
          takes.push((data) => {
            const address = data === undefined ? undefined : addressAt(data, 0);
            if (address !== undefined && address !== zeroAddress) pendingV3.push({ address, token0, token1, fee });
          });
        }
      }
      if (v2Factory !== undefined) {
        calls.push({ target: v2Factory, callData: `${SELECTORS.getPair}${pair}` });
        takes.push((data) => {
          const address = data === undefined ? undefined : addressAt(data, 0);
          if (address !== undefined && address !== zeroAddress)
            found.push({ source: 'uniswap-v2', address, token0, token1 });
        });
      }
    }
  }
  const answers = await multicallAt(client, multicall3, calls, 'latest');
  answers.forEach((data, i) => takes[i]!(data));
  for (const pool of pendingV3) {
    const tickSpacing = spacing.get(pool.fee);
    if (tickSpacing !== undefined) found.push({ source: 'uniswap-v3', ...pool, tickSpacing });
  }
  return found;
}
