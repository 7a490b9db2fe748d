import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPublicClient, erc20Abi, http, maxUint256, parseEther, parseUnits } from 'viem';
import { onlyOwnerMulticallerAbi } from '../../generated/contracts/index.js';
import { startAnvil, type AnvilInstance } from '../../src/chain/anvil.js';
import { devnetViemChain, startDevnet, writeDevnetDescriptor, type Devnet } from '../../src/chain/devnet.js';
import { createHeadFeed } from '../../src/chain/heads.js';
import { isProcessAlive } from '../helpers/anvil.js';

/** Everything a test starts is registered here, so a failing test still leaves no process behind. */
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  await Promise.all(cleanups.map((cleanup) => cleanup()));
});

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}
const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));
const portOf = (server: Server) => (server.address() as { port: number }).port;

/** When each chain's new heads arrive here over its websocket, for `durationMs` (ms, `performance.now()`). */
async function headArrivals(chains: Array<{ chainId: number; wsUrl: string }>, durationMs: number) {
  const quiet = { debug() {}, info() {}, warn() {}, error() {} };
  const feeds = chains.map((chain) => createHeadFeed({ chainId: chain.chainId, url: chain.wsUrl, log: quiet }));
  const arrivals = feeds.map((feed) => {
    const times: number[] = [];
    feed.onHead(() => times.push(performance.now()));
    feed.start();
    return times;
  });
  await new Promise((resolve) => setTimeout(resolve, durationMs));
  await Promise.all(feeds.map((feed) => feed.stop()));
  return arrivals;
}

describe('startAnvil', () => {
  it('picks a free port, answers eth_chainId, and stop() ends the process (twice is fine)', async () => {
    const anvil: AnvilInstance = await startAnvil({ chainId: 4242 });
    cleanups.push(anvil.stop);
    expect(anvil.port).toBeGreaterThan(0);
    expect(anvil.rpcUrl).toBe(`http://127.0.0.1:${anvil.port}`);
    expect(anvil.wsUrl).toBe(`ws://127.0.0.1:${anvil.port}`);
    expect(await createPublicClient({ transport: http(anvil.rpcUrl) }).getChainId()).toBe(4242);
    expect(isProcessAlive(anvil.pid)).toBe(true);

    await Promise.all([anvil.stop(), anvil.stop()]);
    expect(isProcessAlive(anvil.pid)).toBe(false);
    await anvil.stop();
  });

  it('fails with anvil output when the port is taken', async () => {
    const server = await listen(0);
    try {
      // The message carries anvil's own output (its bind error) after the summary line.
      const failure = startAnvil({ chainId: 4243, port: portOf(server) });
      await expect(failure).rejects.toThrow(/exited before listening[\s\S]*Address already in use/);
    } finally {
      await close(server);
    }
  });
});

describe('startDevnet', () => {
  let devnet: Devnet | undefined;

  it('deploys and funds every chain with interval mining, and describes it', async () => {
    const progress: string[] = [];
    devnet = await startDevnet({ chains: [31337, 31338], blockTime: 1, onProgress: (m) => progress.push(m) });
    cleanups.push(devnet.stop);
    const { descriptor } = devnet;

    expect(progress).toContain('deploying contracts on 31337 (' + descriptor.chains[0]!.rpcUrl + ')');
    expect(descriptor.version).toBe(1);
    expect(descriptor.chains.map((c) => [c.chainId, c.name, c.blockTime])).toEqual([
      [31337, 'devnet-a', 1],
      [31338, 'devnet-b', 1],
    ]);
    expect(descriptor.deployer.address).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
    expect(descriptor.solver.address).toBe('0x70997970C51812dc3A010C7d01b50e0d17dc79C8');
    expect(descriptor.accounts).toHaveLength(4);
    // Same deployer and nonces everywhere, so the same addresses on every chain.
    expect(descriptor.chains[1]!.contracts).toEqual(descriptor.chains[0]!.contracts);
    expect(descriptor.chains[0]!.tokens.map((t) => [t.id, t.symbol, t.decimals, t.supportsPermit])).toEqual([
      ['usdc', 'USDC', 6, true],
      ['usdt', 'USDT', 6, true],
      ['weth', 'WETH', 18, false],
      ['mnr', 'MNR', 18, false],
      ['pusd', 'PUSD', 6, true],
    ]);

    for (const chain of descriptor.chains) {
      const client = createPublicClient({ chain: devnetViemChain(chain), transport: http(chain.rpcUrl) });
      const solver = descriptor.solver.address;
      const filler = chain.contracts.onlyOwnerMulticaller;
      const reads = chain.tokens.flatMap(({ address }) => [
        { address, abi: erc20Abi, functionName: 'balanceOf', args: [solver] } as const,
        { address, abi: erc20Abi, functionName: 'balanceOf', args: [descriptor.accounts[3]!.address] } as const,
        { address, abi: erc20Abi, functionName: 'allowance', args: [solver, filler] } as const,
      ]);
      const results = await client.multicall({ contracts: reads, allowFailure: false });
      expect(results).toEqual([
        parseUnits('10000000', 6),
        parseUnits('100000', 6),
        maxUint256,
        parseUnits('10000000', 6),
        parseUnits('100000', 6),
        maxUint256,
        parseEther('10000'),
        parseEther('100'),
        maxUint256,
        parseEther('10000000'),
        parseEther('1000000'),
        maxUint256,
        parseUnits('10000000', 6),
        parseUnits('100000', 6),
        maxUint256,
      ]);
      for (const account of descriptor.accounts) {
        expect(await client.getBalance({ address: account.address })).toBe(parseEther('10000'));
      }
      expect(await client.getBalance({ address: solver })).toBeGreaterThan(parseEther('9999'));
      const owner = await client.readContract({ address: filler, abi: onlyOwnerMulticallerAbi, functionName: 'owner' });
      expect(owner).toBe(solver);
    }
  });

  it('staggers the block phases: the second chain mines about half a block after the first', async () => {
    // Unstaggered, both nodes' timers start with their processes, a few ms apart (the offset is then ~0 or ~1000).
    const arrivals = await headArrivals(devnet!.descriptor.chains, 5_500);
    const offsets = arrivals[1]!.map((at) => {
      const before = arrivals[0]!.filter((origin) => origin <= at).at(-1);
      return before === undefined ? undefined : at - before;
    });
    const measured = offsets.filter((offset): offset is number => offset !== undefined).sort((a, b) => a - b);
    expect(measured.length).toBeGreaterThanOrEqual(3);
    const median = measured[measured.length >> 1]!;
    expect(median).toBeGreaterThan(300);
    expect(median).toBeLessThan(700);
  });

  it('writes the descriptor as JSON, creating directories', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'devnet-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const path = join(dir, 'nested', 'devnet.json');
    await writeDevnetDescriptor(path, devnet!.descriptor);
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual(devnet!.descriptor);
  });

  it('stop() leaves no anvil process behind', async () => {
    const { pids } = devnet!;
    expect(pids.every(isProcessAlive)).toBe(true);
    await devnet!.stop();
    expect(pids.some(isProcessAlive)).toBe(false);
  });

  it('stops the chains it already started when one fails', async () => {
    // Occupy a port right after a free one: the first chain starts, the second cannot bind.
    let blocker: Server | undefined;
    let basePort = 0;
    for (let attempt = 0; attempt < 20 && !blocker; attempt++) {
      const candidate = await listen(0);
      const port = portOf(candidate);
      const before = await listen(port - 1).catch(() => undefined);
      if (before) {
        await close(before);
        blocker = candidate;
        basePort = port - 1;
      } else {
        await close(candidate);
      }
    }
    expect(blocker).toBeDefined();
    try {
      await expect(startDevnet({ chains: [31337, 31338], basePort })).rejects.toThrow(/chain 31338/);
      // The first chain's anvil has been stopped, so its port is free again.
      await close(await listen(basePort));
    } finally {
      await close(blocker!);
    }
  });
});
