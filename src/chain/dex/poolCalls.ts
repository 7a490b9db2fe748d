/**
 * The calls that read Uniswap pool state, encoded and decoded by hand (fixed-size words only), and one batch of them
 * sent as a single Multicall3 `aggregate3` `eth_call` at a given block. A refresh reads hundreds of words per chain
 * per block; viem's generic ABI coder would spend milliseconds of the main thread on what is a few slices here.
 * `test/chain/dex/poolCalls.test.ts` checks the encoding and decoding against viem's.
 */
import type { Address, Hex, PublicClient } from 'viem';
import { decodeAggregate3, encodeAggregate3 } from '../wordReads.js';

export const SELECTORS = {
  /** Multicall3.getBlockNumber() */
  getBlockNumber: '0x42cbb15c',
  /** UniswapV3Pool.slot0() */
  slot0: '0x3850c7bd',
  /** UniswapV3Pool.liquidity() */
  liquidity: '0x1a686502',
  /** UniswapV3Pool.tickBitmap(int16) */
  tickBitmap: '0x5339c296',
  /** UniswapV3Pool.ticks(int24) */
  ticks: '0xf30dba93',
  /** UniswapV2Pair.getReserves() */
  getReserves: '0x0902f1ac',
  /** UniswapV3Factory.getPool(address,address,uint24) */
  getPool: '0x1698ee82',
  /** UniswapV3Factory.feeAmountTickSpacing(uint24) */
  feeAmountTickSpacing: '0x22afcccb',
  /** UniswapV2Factory.getPair(address,address) */
  getPair: '0xe6a43905',
} as const satisfies Record<string, Hex>;

const TWO_256 = 1n << 256n;

/** A signed or unsigned integer as one ABI word (two's complement), 64 hex digits. */
export function wordOfInt(value: bigint | number): string {
  const v = BigInt(value);
  return (v < 0n ? TWO_256 + v : v).toString(16).padStart(64, '0');
}

/** An address as one ABI word. */
export const wordOfAddress = (address: Address): string => address.slice(2).toLowerCase().padStart(64, '0');

/** Word `index` of ABI return data as an unsigned integer; undefined past the end. */
export function uintAt(data: Hex, index: number): bigint | undefined {
  const start = 2 + index * 64;
  if (data.length < start + 64) return undefined;
  return BigInt(`0x${data.slice(start, start + 64)}`);
}

/** Word `index` as a signed integer (int24, int128: the ABI sign-extends them to the word). */
export function intAt(data: Hex, index: number): bigint | undefined {
  const value = uintAt(data, index);
  if (value === undefined) return undefined;
  return value >= 1n << 255n ? value - TWO_256 : value;
}

/** Word `index` as an address; undefined past the end. */
export function addressAt(data: Hex, index: number): Address | undefined {
  const start = 2 + index * 64;
  if (data.length < start + 64) return undefined;
  return `0x${data.slice(start + 24, start + 64).toLowerCase()}`;
}

export interface PoolCall {
  target: Address;
  callData: Hex;
}

/**
 * The return data of each call, in order, from one `aggregate3` at `blockTag` (undefined for a call that failed).
 * Rejects when the node answers with an error or the answer is not `aggregate3`'s.
 */
export async function multicallAt(
  client: Pick<PublicClient, 'request'>,
  multicall3: Address,
  calls: readonly PoolCall[],
  blockTag: bigint | 'latest',
): Promise<(Hex | undefined)[]> {
  if (calls.length === 0) return [];
  const data = await client.request({
    method: 'eth_call',
    params: [
      { to: multicall3, data: encodeAggregate3(calls) },
      blockTag === 'latest' ? 'latest' : `0x${blockTag.toString(16)}`,
    ],
  });
  const results = decodeAggregate3(data, calls.length);
  if (results === null) throw new Error(`multicall3 ${multicall3} answered something other than aggregate3's results`);
  return results.map((result) => (result.success ? result.returnData : undefined));
}
