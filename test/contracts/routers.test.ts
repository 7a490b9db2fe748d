import { describe, expect, it } from 'vitest';
import { decodeFunctionResult, encodeFunctionData, parseEther, parseEventLogs, parseUnits, toHex } from 'viem';
import type { Address, Hex } from 'viem';
import {
  approvalProxyAbi,
  depositoryAbi,
  erc20RouterAbi,
  multicallerAbi,
  onlyOwnerMulticallerAbi,
  stableTokenAbi,
  wrappedNativeAbi,
} from '../../generated/contracts/index.js';
import { expectRevert, useDevnet } from '../helpers/anvil.js';

const devnet = useDevnet();

interface Call {
  to: Address;
  data: Hex;
  value: bigint;
  allowFailure: boolean;
}

let idCounter = 0;
const newId = (): Hex => toHex(++idCounter + 2_000, { size: 32 });
const token = (id: string): Address => devnet.chain.tokens.find((t) => t.id === id)!.address;
const user = (i: number) => devnet.descriptor.accounts[i]!;
const ethBalance = (address: Address) => devnet.publicClient.getBalance({ address });
const call = (to: Address, data: Hex, value = 0n, allowFailure = false): Call => ({ to, data, value, allowFailure });

const encode = {
  transfer: (to: Address, amount: bigint) =>
    encodeFunctionData({ abi: stableTokenAbi, functionName: 'transfer', args: [to, amount] }),
  transferFrom: (from: Address, to: Address, amount: bigint) =>
    encodeFunctionData({ abi: stableTokenAbi, functionName: 'transferFrom', args: [from, to, amount] }),
  approve: (spender: Address, amount: bigint) =>
    encodeFunctionData({ abi: stableTokenAbi, functionName: 'approve', args: [spender, amount] }),
  balanceOf: (owner: Address) => encodeFunctionData({ abi: stableTokenAbi, functionName: 'balanceOf', args: [owner] }),
  cleanupErc20s: (tokens: Address[], recipients: Address[]) =>
    encodeFunctionData({ abi: multicallerAbi, functionName: 'cleanupErc20s', args: [tokens, recipients] }),
  multicall: (calls: Call[], refundTo: Address) =>
    encodeFunctionData({ abi: multicallerAbi, functionName: 'multicall', args: [calls, refundTo] }),
};

/** The Multicaller must never keep anything after a transaction. */
async function expectMulticallerEmpty(): Promise<void> {
  const multicaller = devnet.chain.contracts.multicaller;
  expect(await ethBalance(multicaller)).toBe(0n);
  for (const t of devnet.chain.tokens) expect(await devnet.balanceOf(t.address, multicaller)).toBe(0n);
}

describe('Multicaller', () => {
  const multicaller = () => devnet.chain.contracts.multicaller;
  /** Simulates `multicall` from user 0; the token's errors are in the ABI so bubbled ones decode. */
  const simulate = (calls: Call[]) =>
    devnet.publicClient.simulateContract({
      account: user(0).address,
      address: multicaller(),
      abi: [...multicallerAbi, ...stableTokenAbi],
      functionName: 'multicall',
      args: [calls, user(0).address],
    });

  it('runs calls with the value sent, sweeps tokens by a self-call and refunds leftover native', async () => {
    const refundTo = user(2).address;
    const weth = token('weth');
    const [wethBefore, refundBefore] = [await devnet.balanceOf(weth, user(0).address), await ethBalance(refundTo)];
    const calls = [
      call(weth, encodeFunctionData({ abi: wrappedNativeAbi, functionName: 'deposit' }), parseEther('1')),
      call(multicaller(), encode.cleanupErc20s([weth], [user(0).address])),
    ];

    await devnet.mined(
      devnet.wallet(user(0)).writeContract({
        address: multicaller(),
        abi: multicallerAbi,
        functionName: 'multicall',
        args: [calls, refundTo],
        value: parseEther('1.5'),
      }),
    );
    expect(await devnet.balanceOf(weth, user(0).address)).toBe(wethBefore + parseEther('1'));
    expect(await ethBalance(refundTo)).toBe(refundBefore + parseEther('0.5'));
    await expectMulticallerEmpty();
  });

  it('returns each call result', async () => {
    const usdc = token('usdc');
    const { result } = await simulate([call(usdc, encode.balanceOf(user(0).address))]);
    const [first] = result;
    expect(first!.success).toBe(true);
    const decoded = decodeFunctionResult({ abi: stableTokenAbi, functionName: 'balanceOf', data: first!.returnData });
    expect(decoded).toBe(await devnet.balanceOf(usdc, user(0).address));
  });

  it('bubbles the inner revert data unless the call allows failure', async () => {
    const failing = call(token('usdc'), encode.transfer(user(0).address, 1n)); // the Multicaller holds no USDC
    await expectRevert(simulate([failing]), 'InsufficientBalance');
    const { result } = await simulate([{ ...failing, allowFailure: true }]);
    expect(result[0]!.success).toBe(false);
  });

  it('cleanupErc20s and cleanupNative move full balances out', async () => {
    const wallet = devnet.wallet(user(1));
    const recipient = user(3).address;
    const [usdc, mnr, usdt] = [token('usdc'), token('mnr'), token('usdt')];
    const contract = { address: multicaller(), abi: multicallerAbi } as const;
    const cleanupErc20s = (tokens: Address[], recipients: Address[]) =>
      wallet.writeContract({ ...contract, functionName: 'cleanupErc20s', args: [tokens, recipients] });
    const cleanupNative = (amount: bigint, recipient: Address) =>
      wallet.writeContract({ ...contract, functionName: 'cleanupNative', args: [amount, recipient] });
    await devnet.mined(wallet.sendTransaction({ to: usdc, data: encode.transfer(multicaller(), 7n) }));
    await devnet.mined(wallet.sendTransaction({ to: mnr, data: encode.transfer(multicaller(), 9n) }));
    await devnet.mined(wallet.sendTransaction({ to: multicaller(), value: parseEther('0.3') }));
    const usdcBefore = await devnet.balanceOf(usdc, recipient);
    const mnrBefore = await devnet.balanceOf(mnr, recipient);
    const ethBefore = await ethBalance(recipient);

    await expectRevert(cleanupErc20s([usdc], []), 'ArrayLengthMismatch');
    // A token with no balance (USDT here) is skipped rather than failing the sweep.
    await devnet.mined(cleanupErc20s([usdc, mnr, usdt], [recipient, recipient, recipient]));
    await devnet.mined(cleanupNative(parseEther('0.1'), recipient));
    expect(await ethBalance(multicaller())).toBe(parseEther('0.2'));
    await devnet.mined(cleanupNative(0n, recipient)); // 0 = the full balance

    expect(await devnet.balanceOf(usdc, recipient)).toBe(usdcBefore + 7n);
    expect(await devnet.balanceOf(mnr, recipient)).toBe(mnrBefore + 9n);
    expect(await ethBalance(recipient)).toBe(ethBefore + parseEther('0.3'));
    await expectMulticallerEmpty();
  });
});

describe('OnlyOwnerMulticaller', () => {
  const solver = () => devnet.descriptor.solver.address;
  const fill = (signer: 'solver' | 'user', id: Hex, calls: Call[], value = 0n) =>
    devnet.wallet(signer === 'solver' ? devnet.descriptor.solver : user(0)).writeContract({
      address: devnet.chain.contracts.onlyOwnerMulticaller,
      // Fills bubble the inner call's error, so decode with the token's ABI as well.
      abi: [...onlyOwnerMulticallerAbi, ...stableTokenAbi],
      functionName: 'fill',
      args: [id, calls],
      value,
    });
  const isFilled = (id: Hex) =>
    devnet.publicClient.readContract({
      address: devnet.chain.contracts.onlyOwnerMulticaller,
      abi: onlyOwnerMulticallerAbi,
      functionName: 'filled',
      args: [id],
    });

  it('fills a native request once, emits Filled and refuses a second fill of the same id', async () => {
    const recipient = user(3).address;
    const id = newId();
    const before = await ethBalance(recipient);
    const value = parseEther('0.7');
    const receipt = await devnet.mined(fill('solver', id, [call(recipient, '0x', value)], value));
    expect(await ethBalance(recipient)).toBe(before + value);
    expect(await isFilled(id)).toBe(true);
    const [event] = parseEventLogs({ abi: onlyOwnerMulticallerAbi, eventName: 'Filled', logs: receipt.logs });
    expect(event!.args).toEqual({ id, callCount: 1n });

    const second = await expectRevert(fill('solver', id, [call(recipient, '0x', 1n)], 1n), 'AlreadyFilled');
    expect(second.data?.args).toEqual([id]);
  });

  it('only lets the owner fill', async () => {
    const id = newId();
    await expectRevert(fill('user', id, []), 'Unauthorized');
    expect(await isFilled(id)).toBe(false);
  });

  it('fills ERC-20 requests from the solver inventory through its approval', async () => {
    const usdc = token('usdc');
    const recipient = user(3).address;
    const before = await devnet.balanceOf(usdc, recipient);
    await devnet.mined(fill('solver', newId(), [call(usdc, encode.transferFrom(solver(), recipient, 42_000_000n))]));
    expect(await devnet.balanceOf(usdc, recipient)).toBe(before + 42_000_000n);
  });

  it('reverts the whole fill with the inner error when a call fails, leaving the id unfilled', async () => {
    const id = newId();
    const tooMuch = encode.transferFrom(solver(), solver(), parseUnits('1000000000', 6));
    // allowFailure is ignored: every call of a fill must succeed.
    await expectRevert(fill('solver', id, [call(token('usdc'), tooMuch, 0n, true)]), 'InsufficientBalance');
    expect(await isFilled(id)).toBe(false);
  });

  it('fills a call request by funding the public Multicaller and running the user calls there', async () => {
    const usdc = token('usdc');
    const recipient = user(2).address;
    const { multicaller, depository } = devnet.chain.contracts;
    const amount = parseUnits('5', 6);
    const innerId = newId();
    const deposit = encodeFunctionData({
      abi: depositoryAbi,
      functionName: 'depositErc20',
      args: [recipient, usdc, amount, innerId],
    });
    // The user's calls: deposit the filled USDC into the depository for them, then sweep leftovers.
    const userCalls = [
      call(usdc, encode.approve(depository, amount)),
      call(depository, deposit),
      call(multicaller, encode.cleanupErc20s([usdc], [recipient])),
    ];
    const receipt = await devnet.mined(
      fill('solver', newId(), [
        call(usdc, encode.transferFrom(solver(), multicaller, amount)),
        call(multicaller, encode.multicall(userCalls, recipient)),
      ]),
    );
    const [event] = parseEventLogs({ abi: depositoryAbi, eventName: 'Deposit', logs: receipt.logs });
    expect(event!.args).toMatchObject({ id: innerId, depositor: recipient, token: usdc, amount });
    await expectMulticallerEmpty();
  });
});

describe('ApprovalProxy and Erc20Router', () => {
  it('transferAndMulticall pulls approved tokens into the Multicaller and runs the calls', async () => {
    const wallet = devnet.wallet(user(1));
    const recipient = user(3).address;
    const { approvalProxy, multicaller } = devnet.chain.contracts;
    const [usdc, mnr] = [token('usdc'), token('mnr')];
    const [usdcAmount, mnrAmount] = [parseUnits('12', 6), parseEther('30')];
    await devnet.approve(user(1), usdc, approvalProxy, usdcAmount);
    await devnet.approve(user(1), mnr, approvalProxy, mnrAmount);
    const [usdcBefore, mnrBefore] = [await devnet.balanceOf(usdc, recipient), await devnet.balanceOf(mnr, recipient)];
    const calls = [
      call(usdc, encode.transfer(recipient, usdcAmount)),
      call(multicaller, encode.cleanupErc20s([mnr], [recipient])),
    ];

    const transferAndMulticall = (tokens: Address[], amounts: bigint[]) =>
      wallet.writeContract({
        address: approvalProxy,
        abi: approvalProxyAbi,
        functionName: 'transferAndMulticall',
        args: [tokens, amounts, calls, user(1).address],
      });
    await devnet.mined(transferAndMulticall([usdc, mnr], [usdcAmount, mnrAmount]));
    expect(await devnet.balanceOf(usdc, recipient)).toBe(usdcBefore + usdcAmount);
    expect(await devnet.balanceOf(mnr, recipient)).toBe(mnrBefore + mnrAmount);
    await expectMulticallerEmpty();
    await expectRevert(transferAndMulticall([usdc], []), 'ArrayLengthMismatch');
  });

  it('route pulls one approved token and runs the calls', async () => {
    const recipient = user(3).address;
    const { erc20Router } = devnet.chain.contracts;
    const usdt = token('usdt');
    const amount = parseUnits('3', 6);
    await devnet.approve(user(1), usdt, erc20Router, amount);
    const before = await devnet.balanceOf(usdt, recipient);
    await devnet.mined(
      devnet.wallet(user(1)).writeContract({
        address: erc20Router,
        abi: erc20RouterAbi,
        functionName: 'route',
        args: [usdt, amount, [call(usdt, encode.transfer(recipient, amount))], user(1).address],
      }),
    );
    expect(await devnet.balanceOf(usdt, recipient)).toBe(before + amount);
    await expectMulticallerEmpty();
  });
});

describe('Multicall3', () => {
  it('serves viem multicall reads', async () => {
    const decimals = await devnet.publicClient.multicall({
      allowFailure: false,
      contracts: devnet.chain.tokens.map(
        (t) => ({ address: t.address, abi: stableTokenAbi, functionName: 'decimals' }) as const,
      ),
    });
    expect(decimals).toEqual(devnet.chain.tokens.map((t) => t.decimals));
    const usdc = token('usdc');
    const [balance] = await devnet.publicClient.multicall({
      contracts: [{ address: usdc, abi: stableTokenAbi, functionName: 'balanceOf', args: [user(0).address] }],
    });
    expect(balance).toEqual({ status: 'success', result: await devnet.balanceOf(usdc, user(0).address) });
  });
});
