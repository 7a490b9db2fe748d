import { describe, expect, it } from 'vitest';
import {
  erc20Abi,
  getContract,
  parseEther,
  parseEventLogs,
  parseUnits,
  toHex,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import { depositoryAbi, receiverAbi } from '../../generated/contracts/index.js';
import type { DevnetAccount } from '../../src/chain/devnet.js';
import { expectRevert, useDevnet } from '../helpers/anvil.js';

const devnet = useDevnet();

/** A fresh request id per deposit, so tests do not depend on each other's state. */
let idCounter = 0;
const newId = (): Hex => toHex(++idCounter + 1_000, { size: 32 });

const depository = () => devnet.chain.contracts.depository;
const usdc = (): Address => devnet.chain.tokens.find((t) => t.id === 'usdc')!.address;
const solver = () => devnet.descriptor.solver;
const user = (i: number) => devnet.descriptor.accounts[i]!;
/** Typed reads, e.g. `reader().read.isReleased([index])`. */
const reader = () => getContract({ address: depository(), abi: depositoryAbi, client: devnet.publicClient });

type ReleaseArgs = [bigint, Hex, Address, Address, bigint, Address, bigint];
const release = (signer: 'solver' | 'user', args: ReleaseArgs) =>
  devnet
    .wallet(signer === 'solver' ? solver() : user(3))
    .writeContract({ address: depository(), abi: depositoryAbi, functionName: 'release', args });
const withdrawUnallocated = (signer: 'solver' | 'user', args: [Address, Address, bigint]) =>
  devnet
    .wallet(signer === 'solver' ? solver() : user(3))
    .writeContract({ address: depository(), abi: depositoryAbi, functionName: 'withdrawUnallocated', args });

async function depositNative(amount: bigint, id: Hex) {
  const depositor = user(0);
  const receipt = await devnet.mined(
    devnet.wallet(depositor).writeContract({
      address: depository(),
      abi: depositoryAbi,
      functionName: 'depositNative',
      args: [depositor.address, id],
      value: amount,
    }),
  );
  const [event] = parseEventLogs({ abi: depositoryAbi, eventName: 'Deposit', logs: receipt.logs });
  return { depositor, event: event! };
}

async function depositUsdc(amount: bigint, id: Hex) {
  const depositor = user(1);
  const wallet = devnet.wallet(depositor);
  await devnet.approve(depositor, usdc(), depository(), amount);
  const receipt = await devnet.mined(
    wallet.writeContract({
      address: depository(),
      abi: depositoryAbi,
      functionName: 'depositErc20',
      args: [depositor.address, usdc(), amount, id],
    }),
  );
  const [event] = parseEventLogs({ abi: depositoryAbi, eventName: 'Deposit', logs: receipt.logs });
  return { depositor, event: event! };
}

describe('Depository', () => {
  it('is owned by the solver', async () => {
    expect(await reader().read.owner()).toBe(solver().address);
  });

  it('records native and ERC-20 deposits with sequential indexes and the full Deposit event', async () => {
    const [firstId, secondId] = [newId(), newId()];
    const first = await depositNative(parseEther('1.5'), firstId);
    expect(first.event.args).toMatchObject({
      id: firstId,
      depositor: first.depositor.address,
      token: zeroAddress,
      amount: parseEther('1.5'),
    });
    const second = await depositUsdc(parseUnits('250', 6), secondId);
    expect(second.event.args).toEqual({
      id: secondId,
      depositor: second.depositor.address,
      token: usdc(),
      amount: parseUnits('250', 6),
      depositIndex: first.event.args.depositIndex + 1n,
    });

    // One slot per deposit: the commitment a later release must match.
    const fields = [secondId, second.depositor.address, usdc(), parseUnits('250', 6)] as const;
    const commitment = await reader().read.depositHash(fields);
    expect(await reader().read.deposits([second.event.args.depositIndex])).toBe(commitment);
    expect(await devnet.balanceOf(usdc(), depository())).toBeGreaterThanOrEqual(parseUnits('250', 6));
  });

  it('rejects plain transfers and empty deposits', async () => {
    const wallet = devnet.wallet(user(0));
    await expect(wallet.sendTransaction({ to: depository(), value: 1n })).rejects.toThrow(/revert/);
    await expectRevert(
      wallet.writeContract({
        address: depository(),
        abi: depositoryAbi,
        functionName: 'depositNative',
        args: [wallet.account.address, newId()],
        value: 0n,
      }),
      'ZeroAmount',
    );
  });

  it('releases a deposit exactly once, only for the owner, never more than deposited', async () => {
    const id = newId();
    const { depositor, event } = await depositNative(parseEther('2'), id);
    const index = event.args.depositIndex;
    const refundTo = user(2).address;
    const args = (amount: bigint, deposited = parseEther('2')): ReleaseArgs => [
      index,
      id,
      depositor.address,
      zeroAddress,
      deposited,
      refundTo,
      amount,
    ];

    await expectRevert(release('user', args(parseEther('2'))), 'Unauthorized');
    await expectRevert(release('solver', args(parseEther('2.1'))), 'AmountExceedsDeposit');
    await expectRevert(release('solver', args(parseEther('2'), parseEther('3'))), 'DepositMismatch');

    const before = await devnet.publicClient.getBalance({ address: refundTo });
    const receipt = await devnet.mined(release('solver', args(parseEther('1.9'))));
    expect(await devnet.publicClient.getBalance({ address: refundTo })).toBe(before + parseEther('1.9'));
    const [released] = parseEventLogs({ abi: depositoryAbi, eventName: 'Released', logs: receipt.logs });
    expect(released!.args).toEqual({ depositIndex: index, id, to: refundTo, amount: parseEther('1.9') });
    expect(await reader().read.isReleased([index])).toBe(true);

    await expectRevert(release('solver', args(parseEther('1'))), 'AlreadyReleased');
    const unknown: ReleaseArgs = [index + 1_000n, id, depositor.address, zeroAddress, 1n, refundTo, 1n];
    await expectRevert(release('solver', unknown), 'UnknownDeposit');
  });

  it('keeps the remainder of a partial release as unallocated, withdrawable by the owner only', async () => {
    const id = newId();
    const { depositor, event } = await depositUsdc(parseUnits('100', 6), id);
    const unallocatedBefore = await reader().read.unallocated([usdc()]);
    const amounts = [parseUnits('100', 6), solver().address, parseUnits('99', 6)] as const;
    await devnet.mined(release('solver', [event.args.depositIndex, id, depositor.address, usdc(), ...amounts]));
    const unallocated = await reader().read.unallocated([usdc()]);
    expect(unallocated - unallocatedBefore).toBe(parseUnits('1', 6));

    await expectRevert(withdrawUnallocated('user', [usdc(), user(3).address, 1n]), 'Unauthorized');
    await expectRevert(
      withdrawUnallocated('solver', [usdc(), solver().address, unallocated + 1n]),
      'AmountExceedsUnallocated',
    );
    await devnet.mined(withdrawUnallocated('solver', [usdc(), solver().address, unallocated]));
    expect(await reader().read.unallocated([usdc()])).toBe(0n);
  });

  it('releases a batch of deposits in one transaction, all or nothing, each at most once', async () => {
    const native = await depositNative(parseEther('1'), newId());
    const token = await depositUsdc(parseUnits('50', 6), newId());
    const to = solver().address;
    const nativeRelease = {
      depositIndex: native.event.args.depositIndex,
      id: native.event.args.id,
      depositor: native.depositor.address,
      token: zeroAddress as Address,
      depositAmount: parseEther('1'),
      to,
      amount: parseEther('1'),
    };
    const tokenRelease = {
      depositIndex: token.event.args.depositIndex,
      id: token.event.args.id,
      depositor: token.depositor.address,
      token: usdc(),
      depositAmount: parseUnits('50', 6),
      to,
      amount: parseUnits('50', 6),
    };
    const releaseBatch = (signer: 'solver' | 'user', releases: (typeof nativeRelease)[]) =>
      devnet
        .wallet(signer === 'solver' ? solver() : user(3))
        .writeContract({ address: depository(), abi: depositoryAbi, functionName: 'releaseBatch', args: [releases] });

    await expectRevert(releaseBatch('user', [nativeRelease, tokenRelease]), 'Unauthorized');
    // One mismatched release reverts the whole batch: the other deposit stays unreleased.
    await expectRevert(
      releaseBatch('solver', [nativeRelease, { ...tokenRelease, depositAmount: 1n }]),
      'DepositMismatch',
    );
    expect(await reader().read.isReleased([nativeRelease.depositIndex])).toBe(false);

    const usdcBefore = await devnet.publicClient.readContract({
      address: usdc(),
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [depository()],
    });
    const receipt = await devnet.mined(releaseBatch('solver', [nativeRelease, tokenRelease]));
    const released = parseEventLogs({ abi: depositoryAbi, eventName: 'Released', logs: receipt.logs });
    expect(released.map((e) => e.args.depositIndex)).toEqual([nativeRelease.depositIndex, tokenRelease.depositIndex]);
    expect(
      await devnet.publicClient.readContract({
        address: usdc(),
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [depository()],
      }),
    ).toBe(usdcBefore - parseUnits('50', 6));
    expect(await reader().read.isReleased([tokenRelease.depositIndex])).toBe(true);
    // A second settlement of either deposit is refused.
    await expectRevert(releaseBatch('solver', [tokenRelease]), 'AlreadyReleased');
  });

  it('lets the owner transfer ownership, and nobody else', async () => {
    const transferOwnership = (from: DevnetAccount, to: Address) =>
      devnet
        .wallet(from)
        .writeContract({ address: depository(), abi: depositoryAbi, functionName: 'transferOwnership', args: [to] });
    await expectRevert(transferOwnership(user(3), user(3).address), 'Unauthorized');
    await devnet.mined(transferOwnership(solver(), user(3).address));
    expect(await reader().read.owner()).toBe(user(3).address);
    await devnet.mined(transferOwnership(user(3), solver().address));
  });
});

describe('Receiver', () => {
  const receiver = () => devnet.chain.contracts.receiver;

  it('forwards native deposits to the solver with the request id', async () => {
    const id = newId();
    const before = await devnet.publicClient.getBalance({ address: solver().address });
    const receipt = await devnet.mined(
      devnet.wallet(user(0)).writeContract({
        address: receiver(),
        abi: receiverAbi,
        functionName: 'forward',
        args: [id],
        value: parseEther('0.25'),
      }),
    );
    const after = await devnet.publicClient.getBalance({ address: solver().address });
    expect(after).toBe(before + parseEther('0.25'));
    expect(await devnet.publicClient.getBalance({ address: receiver() })).toBe(0n);
    const [event] = parseEventLogs({ abi: receiverAbi, eventName: 'FundsForwarded', logs: receipt.logs });
    expect(event!.args).toEqual({ id, from: user(0).address, amount: parseEther('0.25') });
  });

  it('rejects plain transfers and lets only the owner change the solver', async () => {
    const wallet = devnet.wallet(user(0));
    await expect(wallet.sendTransaction({ to: receiver(), value: 1n })).rejects.toThrow(/revert/);
    await expectRevert(
      wallet.writeContract({
        address: receiver(),
        abi: receiverAbi,
        functionName: 'setSolver',
        args: [user(0).address],
      }),
      'Unauthorized',
    );
  });
});
