/**
 * What a same-chain DEX swap delivered, read from its receipt (`receivedBy`), and the stored DEX leg read back
 * (`dexLegsOf`): only Transfer logs of the output token to the recipient count, or for native output the WETH
 * the router unwrapped; a malformed stored leg is left out.
 */
import { describe, expect, it } from 'vitest';
import { encodeAbiParameters, keccak256, pad, toBytes, type Address, type Hex } from 'viem';
import { dexLegsOf, type DexLegRecord } from '../../../src/core/dex/legRecord.js';
import { receivedBy } from '../../../src/core/solver/sameChainSwap.js';
import type { ChainLog } from '../../../src/core/chains/chainTransactions.js';

const TRANSFER = keccak256(toBytes('Transfer(address,address,uint256)'));
const WITHDRAWAL = keccak256(toBytes('Withdrawal(address,uint256)'));
const token: Address = '0x1111111111111111111111111111111111111111';
const other: Address = '0x2222222222222222222222222222222222222222';
const router: Address = '0x3333333333333333333333333333333333333333';
const recipient: Address = '0x4444444444444444444444444444444444444444';
const pool: Address = '0x5555555555555555555555555555555555555555';
const txHash: Hex = `0x${'ab'.repeat(32)}`;

const leg = (nativeOut: boolean): DexLegRecord => ({
  chainId: 31337,
  source: 'uniswap-v3',
  router,
  routerKind: 'SwapRouter',
  tokenIn: other,
  tokenOut: token,
  nativeIn: false,
  nativeOut,
  amountIn: '100',
  amountOut: '90',
  minAmountOut: '89',
  priceImpactBps: '100',
  blockNumber: '7',
  hops: [{ pool, fee: 10_000, tokenIn: other, tokenOut: token }],
});

const amount = (value: bigint): Hex => encodeAbiParameters([{ type: 'uint256' }], [value]);
const transfer = (address: Address, from: Address, to: Address, value: bigint): ChainLog => ({
  address,
  topics: [TRANSFER, pad(from), pad(to)],
  data: amount(value),
  transactionHash: txHash,
});

describe('receivedBy', () => {
  it('sums the output token transfers to the recipient, and nothing else', () => {
    const logs = [
      transfer(token, pool, recipient, 60n),
      transfer(token, pool, recipient, 30n),
      transfer(token, pool, other, 1_000n),
      transfer(other, pool, recipient, 1_000n),
    ];
    expect(receivedBy(recipient, leg(false), { status: 'success', blockNumber: 8n, logs })).toBe(90n);
  });

  it('native output: the WETH the router unwrapped', () => {
    const logs: ChainLog[] = [
      { address: token, topics: [WITHDRAWAL, pad(router)], data: amount(77n), transactionHash: txHash },
      { address: token, topics: [WITHDRAWAL, pad(other)], data: amount(5n), transactionHash: txHash },
      transfer(token, pool, router, 77n),
    ];
    expect(receivedBy(recipient, leg(true), { status: 'success', blockNumber: 8n, logs })).toBe(77n);
  });
});

describe('dexLegsOf', () => {
  it('reads a stored leg back and leaves out a malformed one', () => {
    const stored = JSON.parse(JSON.stringify({ dex: { sameChain: leg(false), origin: { chainId: 'x' } } }));
    expect(dexLegsOf(stored)).toEqual({ sameChain: leg(false) });
    expect(dexLegsOf({ slippageBps: 50 })).toEqual({});
    expect(dexLegsOf(null)).toEqual({});
  });
});
