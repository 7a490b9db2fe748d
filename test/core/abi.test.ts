/** The core's hand-written ABI fragments match the compiled contracts: same selectors, same events' absence of drift. */
import { describe, expect, it } from 'vitest';
import { toFunctionSelector, type Abi, type AbiFunction } from 'viem';
import * as compiled from '../../generated/contracts/index.js';
import {
  batchExecutorAbi,
  depositoryAbi,
  multicallerAbi,
  onlyOwnerMulticallerAbi,
  receiverAbi,
} from '../../src/core/abi.js';

const selectors = (abi: Abi): string[] =>
  abi.filter((item): item is AbiFunction => item.type === 'function').map((item) => toFunctionSelector(item));

describe('core ABI fragments', () => {
  it.each([
    ['Depository', depositoryAbi, compiled.depositoryAbi],
    ['Receiver', receiverAbi, compiled.receiverAbi],
    ['OnlyOwnerMulticaller', onlyOwnerMulticallerAbi, compiled.onlyOwnerMulticallerAbi],
    ['Multicaller', multicallerAbi, compiled.multicallerAbi],
    ['BatchExecutor', batchExecutorAbi, compiled.batchExecutorAbi],
  ] as const)('%s: every function the core encodes exists in the compiled ABI', (_name, fragment, full) => {
    const available = new Set(selectors(full));
    for (const selector of selectors(fragment)) expect(available.has(selector), selector).toBe(true);
  });
});
