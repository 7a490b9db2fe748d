/**
 * The state of the pools a quote may route through, as read from chain at one block and kept in memory. Addresses
 * are lower-case hex, so they serve as map keys.
 */
import type { Address } from 'viem';

export type DexSource = 'uniswap-v3' | 'uniswap-v2';

export interface V3PoolState {
  source: 'uniswap-v3';
  address: Address;
  token0: Address;
  token1: Address;
  /** In hundredths of a bip (3000 is 0.3%). */
  fee: number;
  tickSpacing: number;
  sqrtPriceX96: bigint;
  tick: number;
  /** The liquidity in range at the current price. */
  liquidity: bigint;
  /**
   * The tick bitmap words loaded, `minWord` to `maxWord` inclusive (a word covers 256 × tickSpacing ticks). A swap
   * that would read a word outside this window has no exact answer from memory ("insufficient state").
   */
  minWord: number;
  maxWord: number;
  /** Word position → bitmap word; a loaded word that is absent is zero. */
  bitmap: ReadonlyMap<number, bigint>;
  /** Initialized tick → its liquidityNet, for every bit set in the loaded words. */
  liquidityNet: ReadonlyMap<number, bigint>;
}

export interface V2PairState {
  source: 'uniswap-v2';
  address: Address;
  token0: Address;
  token1: Address;
  reserve0: bigint;
  reserve1: bigint;
}

export type PoolState = V3PoolState | V2PairState;

/** Why a pool cannot answer a swap exactly from memory. */
export type PoolShortfall =
  /** The swap walks past the loaded tick window: the answer would need state not in memory. */
  | 'insufficient-state'
  /** The pool has not the liquidity (the price reaches its limit, or the pair's reserve) to fill the amount. */
  | 'insufficient-liquidity';

/** A swap that a pool cannot answer exactly from memory. */
export class PoolShortfallError extends Error {
  override readonly name = 'PoolShortfallError';
  constructor(
    readonly shortfall: PoolShortfall,
    readonly pool: Address,
  ) {
    super(`${shortfall} in pool ${pool}`);
  }
}
