/**
 * The steps' hand-written calldata against viem's generic encoder, the reference: byte for byte for every
 * step call on seeded random arguments (checksummed and lower-case addresses, zero and maximal amounts), and
 * values the ABI cannot carry throw instead of encoding something else.
 */
import { describe, expect, it } from 'vitest';
import { encodeFunctionData, getAddress, maxUint256, toHex, type Address, type Hex } from 'viem';
import { depositoryAbi, erc20Abi, receiverAbi } from '../../../src/core/abi.js';
import { stepCalldata } from '../../../src/core/quote/steps.js';

/** A seeded xorshift generator, so a failure reproduces. */
function random(seed: number) {
  let state = seed;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return state >>> 0;
  };
  const bytes = (length: number) => toHex(Uint8Array.from({ length }, () => next() & 0xff));
  return {
    address: (): Address => (next() % 2 === 0 ? getAddress(bytes(20)) : bytes(20)),
    bytes32: (): Hex => bytes(32),
    amount: (): bigint => [0n, 1n, maxUint256, BigInt(bytes(1 + (next() % 32)))][next() % 4]!,
  };
}

describe('step calldata', () => {
  it("equals viem's encoding for approve, depositNative, depositErc20 and forward", () => {
    const r = random(20261122);
    for (let i = 0; i < 300; i++) {
      const [a, b, amount, id] = [r.address(), r.address(), r.amount(), r.bytes32()];
      expect(stepCalldata.approve(a, amount)).toBe(
        encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [a, amount] }),
      );
      expect(stepCalldata.depositNative(a, id)).toBe(
        encodeFunctionData({ abi: depositoryAbi, functionName: 'depositNative', args: [a, id] }),
      );
      expect(stepCalldata.depositErc20(a, b, amount, id)).toBe(
        encodeFunctionData({ abi: depositoryAbi, functionName: 'depositErc20', args: [a, b, amount, id] }),
      );
      expect(stepCalldata.forward(id)).toBe(
        encodeFunctionData({ abi: receiverAbi, functionName: 'forward', args: [id] }),
      );
    }
  });

  it('rejects amounts outside uint256, malformed addresses and ids that are not 32 bytes', () => {
    const id: Hex = `0x${'ab'.repeat(32)}`;
    const address: Address = `0x${'12'.repeat(20)}`;
    expect(() => stepCalldata.approve(address, -1n)).toThrow(RangeError);
    expect(() => stepCalldata.approve(address, maxUint256 + 1n)).toThrow(RangeError);
    expect(() => stepCalldata.depositNative(`0x${'12'.repeat(19)}`, id)).toThrow(TypeError);
    expect(() => stepCalldata.depositNative('0xzz12121212121212121212121212121212121212', id)).toThrow(TypeError);
    expect(() => stepCalldata.forward(`0x${'ab'.repeat(31)}`)).toThrow(TypeError);
    expect(() => stepCalldata.forward(`${id}00`)).toThrow(TypeError);
  });
});
