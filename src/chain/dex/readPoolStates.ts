/**
 * Reads the state of a chain's pools at one block: v3 `slot0`, `liquidity`, the tick bitmap words within a window
 * around the current price and `ticks(i)` of every initialized tick in them; v2 `getReserves`. Every read of one
 * refresh is at the same block. The words and ticks the previous state held go in the first `aggregate3` beside
 * slot0, so while the price stays in its window a refresh is one `eth_call`; a price that moved to new words, or a
 * newly initialized tick, costs one or two more round trips at the same block.
 */
import type { Address, Hex, PublicClient } from 'viem';
import type { PoolState, V2PairState, V3PoolState } from '../../core/dex/poolState.js';
import { compress, wordOf } from '../../core/dex/v3Swap.js';
import { intAt, multicallAt, SELECTORS, uintAt, wordOfInt, type PoolCall } from './poolCalls.js';

export interface V3PoolInfo {
  source: 'uniswap-v3';
  address: Address;
  token0: Address;
  token1: Address;
  fee: number;
  tickSpacing: number;
}

export interface V2PairInfo {
  source: 'uniswap-v2';
  address: Address;
  token0: Address;
  token1: Address;
}

/** What does not change in a pool: its address, tokens (lower-case, token0 < token1) and v3 fee and spacing. */
export type PoolInfo = V3PoolInfo | V2PairInfo;

export interface ReadPoolStatesParameters {
  client: Pick<PublicClient, 'request'>;
  multicall3: Address;
  pools: readonly PoolInfo[];
  /** Bitmap words read each side of the current price's word. */
  windowWords: number;
  /** The block to read at; default the latest, whose number the first batch reads through Multicall3. */
  blockNumber?: bigint;
  /** The last states read (by pool address): their words and ticks are read in the first round trip. */
  previous?: ReadonlyMap<Address, PoolState>;
}

export interface ReadPoolStatesReturnType {
  blockNumber: bigint;
  pools: PoolState[];
  /** Pools left out: a call to them failed (not a pool, or not deployed at this block). */
  failed: Address[];
  /** `eth_call`s made (one per round trip). */
  roundTrips: number;
  /** Calls made inside them. */
  calls: number;
}

interface V3Reading {
  info: V3PoolInfo;
  sqrtPriceX96: bigint;
  tick: number;
  liquidity: bigint;
  minWord: number;
  maxWord: number;
  words: Map<number, bigint>;
  liquidityNet: Map<number, bigint>;
}

const bitmapCall = (pool: Address, word: number): PoolCall => ({
  target: pool,
  callData: `${SELECTORS.tickBitmap}${wordOfInt(word)}` as Hex,
});
const tickCall = (pool: Address, tick: number): PoolCall => ({
  target: pool,
  callData: `${SELECTORS.ticks}${wordOfInt(tick)}` as Hex,
});

/** The initialized ticks of `word` (its set bits) in a pool of `tickSpacing`. */
function ticksOfWord(word: number, bits: bigint, tickSpacing: number): number[] {
  const ticks: number[] = [];
  for (let bit = 0; bits !== 0n; bit++, bits >>= 1n) {
    if ((bits & 1n) !== 0n) ticks.push((word * 256 + bit) * tickSpacing);
  }
  return ticks;
}

/** The pools' state at one block; see the module comment for the round trips. */
export async function readPoolStates(params: ReadPoolStatesParameters): Promise<ReadPoolStatesReturnType> {
  const { client, multicall3, pools, windowWords, previous } = params;
  let roundTrips = 0;
  let callCount = 0;
  const failed = new Set<Address>();

  /** Calls with a decoder each, sent as one round trip at the refresh's block. */
  let blockTag: bigint | 'latest' = params.blockNumber ?? 'latest';
  async function send(batch: { call: PoolCall; take: (data: Hex | undefined) => void }[]): Promise<void> {
    if (batch.length === 0) return;
    const answers = await multicallAt(
      client,
      multicall3,
      batch.map((b) => b.call),
      blockTag,
    );
    roundTrips++;
    callCount += batch.length;
    batch.forEach((b, i) => b.take(answers[i]));
  }

  // First round trip: the block number (when not given), reserves, slot0 and liquidity, and what the previous state held.
  const first: { call: PoolCall; take: (data: Hex | undefined) => void }[] = [];
  if (blockTag === 'latest') {
    first.push({
      call: { target: multicall3, callData: SELECTORS.getBlockNumber },
      take: (data) => {
        const number = data === undefined ? undefined : uintAt(data, 0);
        if (number === undefined) throw new Error(`multicall3 ${multicall3} gave no block number`);
        blockTag = number;
      },
    });
  }
  const v2: V2PairState[] = [];
  const v3: V3Reading[] = [];
  for (const info of pools) {
    if (info.source === 'uniswap-v2') {
      first.push({
        call: { target: info.address, callData: SELECTORS.getReserves },
        take: (data) => {
          const reserve0 = data === undefined ? undefined : uintAt(data, 0);
          const reserve1 = data === undefined ? undefined : uintAt(data, 1);
          if (reserve0 === undefined || reserve1 === undefined) failed.add(info.address);
          else v2.push({ ...info, reserve0, reserve1 });
        },
      });
      continue;
    }
    const reading: V3Reading = {
      info,
      sqrtPriceX96: 0n,
      tick: 0,
      liquidity: 0n,
      minWord: 0,
      maxWord: -1,
      words: new Map(),
      liquidityNet: new Map(),
    };
    v3.push(reading);
    first.push(
      {
        call: { target: info.address, callData: SELECTORS.slot0 },
        take: (data) => {
          const sqrtPriceX96 = data === undefined ? undefined : uintAt(data, 0);
          const tick = data === undefined ? undefined : intAt(data, 1);
          if (sqrtPriceX96 === undefined || tick === undefined || sqrtPriceX96 === 0n) failed.add(info.address);
          else [reading.sqrtPriceX96, reading.tick] = [sqrtPriceX96, Number(tick)];
        },
      },
      {
        call: { target: info.address, callData: SELECTORS.liquidity },
        take: (data) => {
          const liquidity = data === undefined ? undefined : uintAt(data, 0);
          if (liquidity === undefined) failed.add(info.address);
          else reading.liquidity = liquidity;
        },
      },
    );
    const before = previous?.get(info.address);
    if (before?.source === 'uniswap-v3') {
      for (let word = before.minWord; word <= before.maxWord; word++) first.push(readWord(reading, word));
      for (const tick of before.liquidityNet.keys()) first.push(readTick(reading, tick));
    }
  }

  function readWord(reading: V3Reading, word: number) {
    return {
      call: bitmapCall(reading.info.address, word),
      take: (data: Hex | undefined) => {
        const bits = data === undefined ? undefined : uintAt(data, 0);
        if (bits === undefined) failed.add(reading.info.address);
        else reading.words.set(word, bits);
      },
    };
  }
  function readTick(reading: V3Reading, tick: number) {
    return {
      call: tickCall(reading.info.address, tick),
      take: (data: Hex | undefined) => {
        const net = data === undefined ? undefined : intAt(data, 1);
        if (net === undefined) failed.add(reading.info.address);
        else reading.liquidityNet.set(tick, net);
      },
    };
  }

  await send(first);

  // Then the words of the window around the price now, and the ticks of their set bits, until nothing is missing:
  // at most two more round trips (the words, then the ticks of words just read).
  for (;;) {
    const batch: { call: PoolCall; take: (data: Hex | undefined) => void }[] = [];
    for (const reading of v3) {
      if (failed.has(reading.info.address)) continue;
      const center = wordOf(compress(reading.tick, reading.info.tickSpacing));
      reading.minWord = center - windowWords;
      reading.maxWord = center + windowWords;
      for (let word = reading.minWord; word <= reading.maxWord; word++) {
        const bits = reading.words.get(word);
        if (bits === undefined) {
          batch.push(readWord(reading, word));
          continue;
        }
        for (const tick of ticksOfWord(word, bits, reading.info.tickSpacing)) {
          if (!reading.liquidityNet.has(tick)) batch.push(readTick(reading, tick));
        }
      }
    }
    if (batch.length === 0) break;
    await send(batch);
  }

  const states: PoolState[] = [...v2];
  for (const reading of v3) {
    if (failed.has(reading.info.address)) continue;
    const bitmap = new Map<number, bigint>();
    const liquidityNet = new Map<number, bigint>();
    for (let word = reading.minWord; word <= reading.maxWord; word++) {
      const bits = reading.words.get(word)!;
      if (bits === 0n) continue;
      bitmap.set(word, bits);
      for (const tick of ticksOfWord(word, bits, reading.info.tickSpacing))
        liquidityNet.set(tick, reading.liquidityNet.get(tick)!);
    }
    const state: V3PoolState = {
      ...reading.info,
      sqrtPriceX96: reading.sqrtPriceX96,
      tick: reading.tick,
      liquidity: reading.liquidity,
      minWord: reading.minWord,
      maxWord: reading.maxWord,
      bitmap,
      liquidityNet,
    };
    states.push(state);
  }
  return {
    blockNumber: blockTag as bigint,
    pools: states,
    failed: [...failed],
    roundTrips,
    calls: callCount,
  };
}
