/**
 * The hand-written pool calls against viem's ABI coder: selectors from the signatures, arguments encoded as viem
 * encodes them (negative int16 / int24 included), return words decoded as viem decodes them.
 */
import { describe, expect, it } from 'vitest';
import { encodeAbiParameters, encodeFunctionData, parseAbi, toFunctionSelector, type Hex } from 'viem';
import { addressAt, intAt, SELECTORS, uintAt, wordOfAddress, wordOfInt } from '../../../src/chain/dex/poolCalls.js';

const SIGNATURES: Record<keyof typeof SELECTORS, string> = {
  getBlockNumber: 'getBlockNumber()',
  slot0: 'slot0()',
  liquidity: 'liquidity()',
  tickBitmap: 'tickBitmap(int16)',
  ticks: 'ticks(int24)',
  getReserves: 'getReserves()',
  getPool: 'getPool(address,address,uint24)',
  feeAmountTickSpacing: 'feeAmountTickSpacing(uint24)',
  getPair: 'getPair(address,address)',
};

describe('pool calls', () => {
  it('uses the selectors of the contracts’ signatures', () => {
    for (const [name, signature] of Object.entries(SIGNATURES))
      expect(SELECTORS[name as keyof typeof SELECTORS], name).toBe(toFunctionSelector(`function ${signature}`));
  });

  it('encodes int16 / int24 / address arguments as viem does', () => {
    const abi = parseAbi([
      'function tickBitmap(int16) view returns (uint256)',
      'function ticks(int24) view returns (uint256)',
      'function getPool(address,address,uint24) view returns (address)',
    ]);
    for (const word of [-32768, -3466, -1, 0, 1, 3465, 32767])
      expect(`${SELECTORS.tickBitmap}${wordOfInt(word)}`).toBe(
        encodeFunctionData({ abi, functionName: 'tickBitmap', args: [word] }),
      );
    for (const tick of [-887272, -600, -1, 0, 60, 887272])
      expect(`${SELECTORS.ticks}${wordOfInt(tick)}`).toBe(
        encodeFunctionData({ abi, functionName: 'ticks', args: [tick] }),
      );
    const a = '0x00000000000000000000000000000000000000AA';
    const b = '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2';
    expect(`${SELECTORS.getPool}${wordOfAddress(a)}${wordOfAddress(b)}${wordOfInt(3000)}`).toBe(
      encodeFunctionData({ abi, functionName: 'getPool', args: [a, b, 3000] }).toLowerCase(),
    );
  });

  it('decodes signed, unsigned and address words as viem encodes them', () => {
    const data: Hex = encodeAbiParameters(
      [{ type: 'uint160' }, { type: 'int24' }, { type: 'int128' }, { type: 'address' }],
      [2n ** 150n + 7n, -887272, -(2n ** 120n), '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2'],
    );
    expect(uintAt(data, 0)).toBe(2n ** 150n + 7n);
    expect(intAt(data, 1)).toBe(-887272n);
    expect(intAt(data, 2)).toBe(-(2n ** 120n));
    expect(addressAt(data, 3)).toBe('0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2');
    expect(uintAt(data, 4)).toBeUndefined();
  });
});
