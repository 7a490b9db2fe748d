/**
 * Which deposits the solver's own transactions carry are the order user's (`solverCarrier.ts`): the calldata the
 * watcher reads decides, not the solver's address as the sender.
 */
import { describe, expect, it } from 'vitest';
import { encodeFunctionData, zeroAddress, type Address, type Hex } from 'viem';
import { approvalProxyAbi, depositAddressFactoryAbi } from '../../../generated/contracts/index.js';
import { computeDepositAddress } from '../../../src/core/vocabulary/depositAddress.js';
import { depositOwner, solverCarrierOf } from '../../../src/core/solver/solverCarrier.js';
import type { DepositRecord } from '../../../src/records/deposit.js';
import type { RequestRecord } from '../../../src/records/request.js';
import { chainAddress, makeChainConfig } from '../../helpers/chainConfig.js';

const factory = chainAddress(1, 0x20);
const chain = makeChainConfig(1, {
  contracts: { ...makeChainConfig(1).contracts, depositAddressFactory: factory },
});
const solver: Address = '0x00000000000000000000000000000000000050a1';
const user: Address = '0x0000000000000000000000000000000000001234';
const key: Hex = `0x${'ab'.repeat(32)}`;
const id: Hex = `0x${'cd'.repeat(32)}`;

const sweepCall = (sweepKey: Hex): Hex =>
  encodeFunctionData({
    abi: depositAddressFactoryAbi,
    functionName: 'sweep',
    args: [sweepKey, zeroAddress, id, zeroAddress, [{ id, depositor: user, amount: 5n }]],
  });

const request = (depositAddress: string | null) =>
  ({ id, user, originChainId: 1, depositAddress }) as unknown as RequestRecord;
const deposit = (sender: string, carrier: string | null) => ({ chainId: 1, sender, carrier }) as DepositRecord;

describe('solverCarrierOf', () => {
  it('names the deposit address a sweep moved, a permit owner, or the target of any other call', () => {
    expect(solverCarrierOf(chain, { to: factory, input: sweepCall(key) })).toBe(
      `sweep:${computeDepositAddress(factory, key, null).toLowerCase()}`,
    );
    const permit = encodeFunctionData({
      abi: approvalProxyAbi,
      functionName: 'depositWithPermit',
      args: [id, chainAddress(1, 0x10), user, 5n, 1n, 27, id, id],
    });
    expect(solverCarrierOf(chain, { to: chain.contracts.approvalProxy, input: permit })).toBe(
      `permit:${user.toLowerCase()}`,
    );
    const multicaller = chain.contracts.multicaller;
    expect(solverCarrierOf(chain, { to: multicaller, input: '0x1234' })).toBe(`call:${multicaller.toLowerCase()}`);
    // The factory's address with calldata that is not a sweep is a call like any other.
    expect(solverCarrierOf(chain, { to: factory, input: '0xdeadbeef' })).toBe(`call:${factory.toLowerCase()}`);
  });
});

describe('depositOwner', () => {
  const own = computeDepositAddress(factory, key, null).toLowerCase();
  it("counts a solver-sent deposit as the user's only for their own address's sweep, permit or batch", () => {
    expect(depositOwner(request(null), deposit(user, null), solver)).toBe('sender');
    expect(depositOwner(request(own), deposit(solver, `sweep:${own}`), solver)).toBe('user');
    expect(depositOwner(request(null), deposit(solver, `permit:${user.toLowerCase()}`), solver)).toBe('user');
    expect(depositOwner(request(null), deposit(solver, `call:${user.toLowerCase()}`), solver)).toBe('user');
  });
  it('matches no request for any other deposit the solver carried', () => {
    const other = computeDepositAddress(factory, id, null).toLowerCase();
    expect(depositOwner(request(own), deposit(solver, `sweep:${other}`), solver)).toBe('in-solver-transaction');
    expect(depositOwner(request(null), deposit(solver, `sweep:${own}`), solver)).toBe('in-solver-transaction');
    expect(
      depositOwner(request(own), deposit(solver, `call:${chain.contracts.multicaller.toLowerCase()}`), solver),
    ).toBe('in-solver-transaction');
    expect(
      depositOwner(request(own), deposit(solver, 'permit:0x0000000000000000000000000000000000009999'), solver),
    ).toBe('in-solver-transaction');
    // Recorded before carriers were: nothing proves it is the user's.
    expect(depositOwner(request(own), deposit(solver, null), solver)).toBe('in-solver-transaction');
  });
});
