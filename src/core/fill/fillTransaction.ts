import { encodeFunctionData, zeroAddress, type Address, type Hex } from 'viem';
import { erc20Abi, multicallerAbi, onlyOwnerMulticallerAbi } from '../abi.js';
import type { ChainContracts } from '../chains/types.js';

/** A call of the user's `txs`, run on the destination chain by the public multicaller. */
export interface DestinationCall {
  to: Address;
  data: Hex;
  value: bigint;
}

export interface FillTransactionParameters {
  requestId: Hex;
  contracts: Pick<ChainContracts, 'onlyOwnerMulticaller' | 'multicaller'>;
  solver: Address;
  recipient: Address;
  /** Destination currency; the zero address is native. */
  currency: Address;
  /** What the recipient (or, with calls, the multicaller) receives, smallest units. */
  amount: bigint;
  /** The user's calls; empty or absent for a plain payment. */
  calls?: ReadonlyArray<DestinationCall> | undefined;
  /** Native gas sent to the recipient besides the output (`topupGas`), smallest units; 0 or absent for none. */
  gasTopup?: bigint | undefined;
  /**
   * Deliver the output through a DEX instead of paying it from inventory: the solver's `amountIn` of `currency`
   * (its entry currency; the zero address is native) goes to the public multicaller, which approves the router
   * and sends `call` (a `routerSwapCall` to the recipient with the order's minimum). `currency` and `amount` above
   * are then the order's output and are not paid directly.
   */
  dexSwap?: DexSwapFill | undefined;
}

/** What a fill spends through a DEX router (see `FillTransactionParameters.dexSwap`). */
export interface DexSwapFill {
  currency: Address;
  amountIn: bigint;
  call: { to: Address; data: Hex; value: bigint };
}

export interface FillTransaction {
  to: Address;
  data: Hex;
  value: bigint;
}

/**
 * The destination transaction that fills a request, sent by the solver to its `OnlyOwnerMulticaller`, whose
 * `fill(id, calls)` records `id` so a second fill reverts on chain:
 * - payment in native: one call sending `amount` to the recipient;
 * - payment in an ERC-20: `transferFrom(solver, recipient, amount)` (the solver approves the fill contract);
 * - with the user's calls: the funds go to the public multicaller (native as value, tokens by `transferFrom`),
 *   which runs the calls and returns leftover native to the recipient. The calls themselves sweep leftover
 *   tokens (`cleanupErc20s`), as the reference's calling guide asks;
 * - with a gas top-up: one more call sends the native amount to the recipient, in the same transaction, so the
 *   output and the gas arrive together or not at all.
 *
 * The quote estimates this transaction's gas for the execution fee; the solver sends it.
 */
export function fillTransaction(params: FillTransactionParameters): FillTransaction {
  const { requestId, contracts, solver, recipient, currency, amount, calls } = params;
  const native = currency.toLowerCase() === zeroAddress;
  const inner: Array<{ to: Address; data: Hex; value: bigint; allowFailure: boolean }> = [];
  let value = native ? amount : 0n;
  if (params.dexSwap !== undefined) {
    ({ value } = dexSwapCalls(params, inner));
  } else if (calls === undefined || calls.length === 0) {
    inner.push(
      native
        ? { to: recipient, data: '0x', value: amount, allowFailure: false }
        : { to: currency, data: transferFrom(solver, recipient, amount), value: 0n, allowFailure: false },
    );
  } else {
    if (!native)
      inner.push({
        to: currency,
        data: transferFrom(solver, contracts.multicaller, amount),
        value: 0n,
        allowFailure: false,
      });
    const multicall = encodeFunctionData({
      abi: multicallerAbi,
      functionName: 'multicall',
      args: [calls.map((call) => ({ ...call, allowFailure: false })), recipient],
    });
    inner.push({ to: contracts.multicaller, data: multicall, value: native ? amount : 0n, allowFailure: false });
  }
  const gasTopup = params.gasTopup ?? 0n;
  if (gasTopup > 0n) inner.push({ to: recipient, data: '0x', value: gasTopup, allowFailure: false });
  return {
    to: contracts.onlyOwnerMulticaller,
    data: encodeFunctionData({ abi: onlyOwnerMulticallerAbi, functionName: 'fill', args: [requestId, inner] }),
    value: value + gasTopup,
  };
}

/**
 * The fill's calls that buy the output through a DEX: the entry currency to the public multicaller (a token by
 * `transferFrom`, native as value), which approves the router for exactly `amountIn` (tokens) and runs the router
 * call. The router enforces the minimum: below it the whole fill reverts and nothing leaves the solver.
 */
function dexSwapCalls(
  params: FillTransactionParameters,
  inner: Array<{ to: Address; data: Hex; value: bigint; allowFailure: boolean }>,
): { value: bigint } {
  const { contracts, solver, recipient } = params;
  const swap = params.dexSwap!;
  const native = swap.currency.toLowerCase() === zeroAddress;
  const multicallCalls: Array<{ to: Address; data: Hex; value: bigint; allowFailure: boolean }> = [];
  if (!native) {
    inner.push({
      to: swap.currency,
      data: transferFrom(solver, contracts.multicaller, swap.amountIn),
      value: 0n,
      allowFailure: false,
    });
    multicallCalls.push({
      to: swap.currency,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [swap.call.to, swap.amountIn] }),
      value: 0n,
      allowFailure: false,
    });
  }
  multicallCalls.push({ ...swap.call, allowFailure: false });
  const value = native ? swap.amountIn : 0n;
  inner.push({
    to: contracts.multicaller,
    data: encodeFunctionData({ abi: multicallerAbi, functionName: 'multicall', args: [multicallCalls, recipient] }),
    value,
    allowFailure: false,
  });
  return { value };
}

/**
 * Whom the fill pays: the recipient for a plain payment; with calls, the public multicaller, which receives
 * the whole output and runs the calls (what they pay, and to whom, is in the calls). The quote's
 * `details.recipient`, its order's output payment and the attestation's `destinationUser` all name this
 * address, so each agrees with what the fill transaction does on chain.
 */
export function fillPayee(
  contracts: Pick<ChainContracts, 'multicaller'>,
  recipient: Address,
  calls: ReadonlyArray<DestinationCall> | undefined,
): Address {
  return calls === undefined || calls.length === 0 ? recipient : contracts.multicaller;
}

const transferFrom = (from: Address, to: Address, amount: bigint): Hex =>
  encodeFunctionData({ abi: erc20Abi, functionName: 'transferFrom', args: [from, to, amount] });
