/**
 * `SwapDepositRouter` on the devnet's real Uniswap routers: the whole swap output lands in the depository for the
 * request, naming the user; the minimum holds in the user's transaction; nothing stays in the router or its
 * executor; the executor cannot be driven by anyone else, nor spend an allowance users gave the router.
 */
import { describe, expect, it } from 'vitest';
import {
  encodeFunctionData,
  getAddress,
  parseEther,
  parseEventLogs,
  parseUnits,
  toFunctionSelector,
  toHex,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import {
  depositoryAbi,
  stableTokenAbi,
  swapDepositRouterAbi,
  swapExecutorAbi,
  wrappedNativeAbi,
} from '../../generated/contracts/index.js';
import { createDexBook, type DexBook } from '../../src/chain/dex/dexBook.js';
import type { DexSource } from '../../src/core/dex/poolState.js';
import { routerSwapCall } from '../../src/core/dex/routerCalls.js';
import type { DexRoute } from '../../src/core/dex/route.js';
import type { Logger } from '../../src/core/logger.js';
import { expectRevert, useDevnet } from '../helpers/anvil.js';

const quiet: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
/** The router's and the executor's errors, and the depository's event, decoded together. */
const abi = [...swapDepositRouterAbi, ...swapExecutorAbi, ...depositoryAbi] as const;

describe('SwapDepositRouter', () => {
  const devnet = useDevnet({ accountCount: 3 });
  let book: DexBook | undefined;
  let idCounter = 0;
  const newId = (): Hex => toHex(++idCounter + 7_000, { size: 32 });
  const token = (symbol: string): Address =>
    [...devnet.chain.tokens, ...devnet.chain.longTailTokens].find((t) => t.symbol === symbol)!.address;
  const user = (i: number) => devnet.descriptor.accounts[i]!;
  const router = () => devnet.chain.contracts.swapDepositRouter;
  const executor = () =>
    devnet.publicClient.readContract({ address: router(), abi: swapDepositRouterAbi, functionName: 'executor' });

  async function route(
    from: string,
    to: string,
    amountIn: bigint,
    source: DexSource = 'uniswap-v3',
  ): Promise<DexRoute> {
    const { chain, publicClient } = devnet;
    book ??= createDexBook({
      log: quiet,
      chains: [
        {
          chainId: chain.chainId,
          client: publicClient,
          multicall3: chain.contracts.multicall3,
          uniswapV3: { factory: chain.dex.uniswapV3.factory, router: chain.dex.uniswapV3.swapRouter },
          uniswapV2: { factory: chain.dex.uniswapV2.factory, router: chain.dex.uniswapV2.router },
          tokens: [...chain.tokens, ...chain.longTailTokens].map((t) => t.address),
          hubs: [token('WETH'), token('USDC')],
        },
      ],
    });
    await book.refresh(chain.chainId);
    const quote = book.quoteExactIn({
      chainId: chain.chainId,
      tokenIn: token(from),
      tokenOut: token(to),
      amountIn,
      sources: [source],
    });
    if (!quote.ok) throw new Error(`no route ${from} → ${to}: ${quote.shortfall}`);
    return quote.route;
  }

  /** The swapAndDeposit arguments for `route`, the swap's recipient being the executor. */
  async function swapArgs(r: DexRoute, opts: { minOut?: bigint; nativeOut?: boolean; depositor: Address; id: Hex }) {
    const call = routerSwapCall(r, {
      recipient: await executor(),
      amountOutMinimum: 0n,
      deadline: BigInt(Math.floor(Date.now() / 1000) + 3600),
      nativeOut: opts.nativeOut,
    });
    return [
      r.tokenIn,
      r.amountIn,
      call.to,
      call.data,
      opts.nativeOut === true ? zeroAddress : r.tokenOut,
      opts.minOut ?? r.amountOut,
      opts.depositor,
      opts.id,
    ] as const;
  }

  async function expectNothingHeld(): Promise<void> {
    const held = [router(), await executor()];
    for (const owner of held) {
      expect(await devnet.publicClient.getBalance({ address: owner })).toBe(0n);
      for (const t of ['LONG', 'WETH', 'USDC']) expect(await devnet.balanceOf(token(t), owner)).toBe(0n);
      for (const t of ['LONG', 'WETH', 'USDC'])
        expect(
          await devnet.publicClient.readContract({
            address: token(t),
            abi: stableTokenAbi,
            functionName: 'allowance',
            args: [await executor(), devnet.chain.dex.uniswapV3.swapRouter],
          }),
        ).toBe(0n);
    }
  }

  it.each([
    { to: 'USDC', source: 'uniswap-v3' as const, nativeOut: false },
    { to: 'WETH', source: 'uniswap-v2' as const, nativeOut: false },
    { to: 'WETH', source: 'uniswap-v3' as const, nativeOut: true },
  ])('swaps LONG to $to on $source (native out: $nativeOut) and deposits all of it for the user', async (c) => {
    const payer = user(0);
    const r = await route('LONG', c.to, parseEther('200'), c.source);
    const id = newId();
    await devnet.approve(payer, token('LONG'), router(), r.amountIn);
    const longBefore = await devnet.balanceOf(token('LONG'), payer.address);
    const args = await swapArgs(r, { depositor: payer.address, id, nativeOut: c.nativeOut });
    const receipt = await devnet.mined(
      devnet.wallet(payer).writeContract({ address: router(), abi, functionName: 'swapAndDeposit', args }),
    );
    const [deposit] = parseEventLogs({ abi: depositoryAbi, eventName: 'Deposit', logs: receipt.logs });
    expect(deposit!.args).toMatchObject({
      id,
      depositor: payer.address,
      token: c.nativeOut ? zeroAddress : getAddress(r.tokenOut),
      // Nothing moved since the quote: the pools pay exactly what the book computed.
      amount: r.amountOut,
    });
    expect(await devnet.balanceOf(token('LONG'), payer.address)).toBe(longBefore - r.amountIn);
    await expectNothingHeld();
  });

  it('reverts in the user’s transaction when the swap pays less than the minimum: nothing moves', async () => {
    const payer = user(1);
    const r = await route('LONG', 'USDC', parseEther('100'));
    await devnet.approve(payer, token('LONG'), router(), r.amountIn);
    const before = await devnet.balanceOf(token('LONG'), payer.address);
    const countBefore = await devnet.publicClient.readContract({
      address: devnet.chain.contracts.depository,
      abi: depositoryAbi,
      functionName: 'depositCount',
    });
    const args = await swapArgs(r, { depositor: payer.address, id: newId(), minOut: r.amountOut + 1n });
    await expectRevert(
      devnet.publicClient.simulateContract({
        account: payer.address,
        address: router(),
        abi,
        functionName: 'swapAndDeposit',
        args,
      }),
      'InsufficientOutput',
    );
    // Sent anyway (a wallet that does not simulate), it reverts on chain.
    const hash = await devnet.wallet(payer).writeContract({
      address: router(),
      abi,
      functionName: 'swapAndDeposit',
      args,
      gas: 1_000_000n,
    });
    const receipt = await devnet.publicClient.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('reverted');
    expect(await devnet.balanceOf(token('LONG'), payer.address)).toBe(before);
    expect(
      await devnet.publicClient.readContract({
        address: devnet.chain.contracts.depository,
        abi: depositoryAbi,
        functionName: 'depositCount',
      }),
    ).toBe(countBefore);
    await expectNothingHeld();
  });

  it('only the router drives the executor', async () => {
    const r = await route('LONG', 'USDC', parseEther('1'));
    const args = await swapArgs(r, { depositor: user(0).address, id: newId() });
    await expectRevert(
      devnet.publicClient.simulateContract({
        account: user(0).address,
        address: await executor(),
        abi,
        functionName: 'run',
        args: [
          {
            tokenIn: args[0],
            amountIn: args[1],
            swapTarget: args[2],
            swapData: args[3],
            tokenOut: args[4],
            minOut: args[5],
            depositor: args[6],
            id: args[7],
            payer: user(0).address,
          },
        ],
      }),
      'NotRouter',
    );
  });

  it('a caller-chosen swap cannot spend what another user approved the router for', async () => {
    const victim = user(2);
    const thief = user(1);
    await devnet.approve(victim, token('USDC'), router(), parseUnits('1000', 6));
    // The "swap" is USDC.transferFrom(victim, thief): run by the executor, which holds no allowance from the victim.
    const steal = encodeFunctionData({
      abi: stableTokenAbi,
      functionName: 'transferFrom',
      args: [victim.address, thief.address, parseUnits('1000', 6)],
    });
    await devnet.approve(thief, token('LONG'), router(), 1n);
    const simulation = devnet.publicClient.simulateContract({
      account: thief.address,
      address: router(),
      abi,
      functionName: 'swapAndDeposit',
      args: [token('LONG'), 1n, token('USDC'), steal, token('USDC'), 0n, thief.address, newId()],
    });
    await expectRevert(simulation, 'SwapFailed');
    expect(await devnet.balanceOf(token('USDC'), victim.address)).toBe(parseUnits('100000', 6));
  });

  it('returns input the swap left unspent to the payer: nothing stays behind', async () => {
    const payer = user(0);
    await devnet.approve(payer, token('LONG'), router(), parseEther('5'));
    const before = await devnet.balanceOf(token('LONG'), payer.address);
    // A "swap" that spends nothing (WETH.deposit() with no value): no output, the whole input comes back.
    const noop = encodeFunctionData({ abi: wrappedNativeAbi, functionName: 'deposit' });
    await devnet.mined(
      devnet.wallet(payer).writeContract({
        address: router(),
        abi,
        functionName: 'swapAndDeposit',
        args: [token('LONG'), parseEther('5'), token('WETH'), noop, token('USDC'), 0n, payer.address, newId()],
      }),
    );
    expect(await devnet.balanceOf(token('LONG'), payer.address)).toBe(before);
    await expectNothingHeld();
  });

  it('a swap that calls back into the router is refused (no re-entry)', async () => {
    const payer = user(0);
    const r = await route('LONG', 'USDC', parseEther('1'));
    await devnet.approve(payer, token('LONG'), router(), parseEther('2'));
    const inner = await swapArgs(r, { depositor: payer.address, id: newId() });
    const reenter = encodeFunctionData({ abi: swapDepositRouterAbi, functionName: 'swapAndDeposit', args: inner });
    const error = await expectRevert(
      devnet.publicClient.simulateContract({
        account: payer.address,
        address: router(),
        abi,
        functionName: 'swapAndDeposit',
        args: [token('LONG'), parseEther('1'), router(), reenter, token('USDC'), 0n, payer.address, newId()],
      }),
      'SwapFailed',
    );
    // The inner call's own revert: the router's guard.
    expect(error.data?.args?.[0]).toBe(toFunctionSelector('Reentrancy()'));
  });

  it('refuses a zero input and a zero depositor', async () => {
    const r = await route('LONG', 'USDC', parseEther('1'));
    const args = await swapArgs(r, { depositor: user(0).address, id: newId() });
    const simulate = (a: readonly unknown[]) =>
      devnet.publicClient.simulateContract({
        account: user(0).address,
        address: router(),
        abi,
        functionName: 'swapAndDeposit',
        args: a as typeof args,
      });
    await expectRevert(simulate([args[0], 0n, ...args.slice(2)]), 'ZeroAmount');
    await expectRevert(simulate([...args.slice(0, 6), zeroAddress, args[7]]), 'ZeroAddress');
  });
});
