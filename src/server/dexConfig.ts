/**
 * A config file's per-chain `dex` section: the Uniswap deployments swaps may route through (docs/configuration.md,
 * "DEX liquidity"). The same shape as the devnet descriptor's `dex`, which the devnet fills with its own
 * deployments.
 */
import { getAddress } from 'viem';
import type { DexConfig, DexPool } from '../core/chains/types.js';
import type { SwapRouterKind } from '../core/dex/routerCalls.js';

const address = { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$' } as const;

const poolSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['address', 'token0', 'token1', 'fee'],
  properties: {
    address,
    token0: address,
    token1: address,
    // Hundredths of a bip, below 1,000,000 (100 %) as a v3 factory requires.
    fee: { type: 'integer', minimum: 1, maximum: 999_999 },
  },
} as const;

/** JSON schema of `chains[].dex`. */
export const dexSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    uniswapV3: {
      type: 'object',
      additionalProperties: false,
      required: ['factory', 'swapRouter', 'quoterV2'],
      properties: {
        factory: address,
        swapRouter: address,
        // `SwapRouter02` (Base, and newer deployments) has no deadline in its swap structs.
        swapRouterKind: { enum: ['SwapRouter', 'SwapRouter02'] },
        quoterV2: address,
        positionManager: address,
        pools: { type: 'array', items: poolSchema, maxItems: 1000 },
      },
    },
    uniswapV2: {
      type: 'object',
      additionalProperties: false,
      required: ['factory', 'router'],
      properties: { factory: address, router: address, pools: { type: 'array', items: poolSchema, maxItems: 1000 } },
    },
  },
} as const;

interface PoolFile {
  address: string;
  token0: string;
  token1: string;
  fee: number;
}

/** `chains[].dex` as the file has it (addresses in any letter case). */
export interface DexFile {
  uniswapV3?: {
    factory: string;
    swapRouter: string;
    swapRouterKind?: SwapRouterKind;
    quoterV2: string;
    positionManager?: string;
    pools?: PoolFile[];
  };
  uniswapV2?: { factory: string; router: string; pools?: PoolFile[] };
}

/**
 * What the schema cannot say about `dex`: a pool's tokens are two different tokens in the pool's own order (token0
 * below token1, as a Uniswap pool sorts them), and a v2 pair's fee is Uniswap v2's 0.3 % (3000).
 */
export function checkDexFile(dex: DexFile | undefined, where: string, problems: string[]): void {
  const check = (pools: PoolFile[] | undefined, path: string, v2: boolean) => {
    for (const [k, pool] of (pools ?? []).entries()) {
      if (BigInt(pool.token0) >= BigInt(pool.token1))
        problems.push(`${where}.${path}.${k}: token0 must be below token1 (the pool's own order), and differ from it`);
      if (v2 && pool.fee !== 3000) problems.push(`${where}.${path}.${k}.fee: a Uniswap v2 pair's fee is 3000 (0.3 %)`);
    }
  };
  check(dex?.uniswapV3?.pools, 'uniswapV3.pools', false);
  check(dex?.uniswapV2?.pools, 'uniswapV2.pools', true);
}

const poolFromFile = (pool: PoolFile): DexPool => ({
  address: getAddress(pool.address),
  token0: getAddress(pool.token0),
  token1: getAddress(pool.token1),
  fee: pool.fee,
});

/** The chain's `DexConfig` from its file section, addresses checksummed; `undefined` when the file has none. */
export function dexFromFile(dex: DexFile | undefined): DexConfig | undefined {
  if (dex === undefined) return undefined;
  const { uniswapV3: v3, uniswapV2: v2 } = dex;
  return {
    ...(v3 === undefined
      ? {}
      : {
          uniswapV3: {
            factory: getAddress(v3.factory),
            swapRouter: getAddress(v3.swapRouter),
            ...(v3.swapRouterKind === undefined ? {} : { swapRouterKind: v3.swapRouterKind }),
            quoterV2: getAddress(v3.quoterV2),
            ...(v3.positionManager === undefined ? {} : { positionManager: getAddress(v3.positionManager) }),
            ...(v3.pools === undefined ? {} : { pools: v3.pools.map(poolFromFile) }),
          },
        }),
    ...(v2 === undefined
      ? {}
      : {
          uniswapV2: {
            factory: getAddress(v2.factory),
            router: getAddress(v2.router),
            ...(v2.pools === undefined ? {} : { pools: v2.pools.map(poolFromFile) }),
          },
        }),
  };
}
