/**
 * What real RPC providers do that anvil never does, injected by a proxy in front of a real anvil (the faults
 * are the proxy's; every answer it forwards is anvil's): an endpoint down, a 429 with `Retry-After`, and
 * `eth_getLogs` ranges refused for their size (by blocks, or by results). The gateway's chain clients
 * (`createChainClients`) must fall back in order, back off, and split ranges, so that watchers read every log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPublicClient,
  createWalletClient,
  http,
  parseAbi,
  type Address,
  type Hex,
  type Log,
  type PublicClient,
} from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { startAnvil, type AnvilInstance } from '../../src/chain/anvil.js';
import { createChainClients } from '../../src/chain/clients.js';
import { isLogRangeRefusal } from '../../src/chain/logRanges.js';
import { ANVIL_MNEMONIC } from '../../src/chain/devnet.js';
import { makeChainConfig } from '../helpers/chainConfig.js';
import { startRpcProxy, type RpcProxy } from '../helpers/rpcProxy.js';

// A chain id no devnet uses: a gateway of another test file still polling a port the OS gave this anvil again cannot
// send it transactions signed for a devnet chain (they would add blocks and shift the counts below).
const chainId = 31990;
let anvil: AnvilInstance;
let direct: PublicClient;
/** A contract whose every call emits `Ping()` (runtime `PUSH32 topic PUSH1 0 PUSH1 0 LOG1 STOP`). */
let emitter: Address;
const proxies: RpcProxy[] = [];

async function proxy(): Promise<RpcProxy> {
  const started = await startRpcProxy(anvil.rpcUrl);
  proxies.push(started);
  return started;
}

const clientOver = (httpRpcUrl: string, fallbackHttpRpcUrls: string[] = []) =>
  createChainClients([makeChainConfig(chainId, { httpRpcUrl, fallbackHttpRpcUrls })]).get(chainId)!;

const blockOf = (value: unknown) => BigInt(value as Hex);
const pingAbi = parseAbi(['event Ping()']);

beforeAll(async () => {
  anvil = await startAnvil({ chainId });
  // No cached head: each test reads the chain as it is now.
  direct = createPublicClient({ transport: http(anvil.rpcUrl), cacheTime: 0 });
  const wallet = createWalletClient({
    account: mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: 3 }),
    transport: http(anvil.rpcUrl),
    chain: { ...foundry, id: chainId },
  });
  const deployment = await wallet.sendTransaction({
    data: '0x6027600c60003960276000f37fca6e822df923f741dfe968d15d80a18abd25bd1e748bcb9ad81fea5bbb7386af60006000a100',
  });
  emitter = (await direct.waitForTransactionReceipt({ hash: deployment })).contractAddress!;
  // Twelve logs, each in a block of its own (anvil mines one block per transaction), with empty blocks between.
  for (let n = 0; n < 12; n++) {
    await direct.waitForTransactionReceipt({ hash: await wallet.sendTransaction({ to: emitter }) });
    if (n % 3 === 0) await direct.request({ method: 'evm_mine' as never });
  }
});
afterAll(async () => {
  await Promise.all(proxies.map((p) => p.close()));
  await anvil?.stop();
});

const key = (log: Log) => `${log.blockNumber}:${log.logIndex}:${log.transactionHash}`;

describe('eth_getLogs ranges a provider refuses', () => {
  it('splits a range refused for its block count until every part is accepted, and returns every log in order', async () => {
    const limited = await proxy();
    // As QuickNode and many public nodes word it.
    limited.inject = (call) =>
      call.method === 'eth_getLogs' &&
      blockOf((call.params[0] as any).toBlock) - blockOf((call.params[0] as any).fromBlock) + 1n > 4n
        ? { rpcError: { code: -32614, message: 'eth_getLogs is limited to a 4 range' } }
        : undefined;
    const head = await direct.getBlockNumber();
    const expected = await direct.getLogs({ address: emitter, fromBlock: 0n, toBlock: head });
    expect(expected).toHaveLength(12);
    const logs = await clientOver(limited.url).getLogs({ address: emitter, fromBlock: 0n, toBlock: head });
    expect(logs.map(key)).toEqual(expected.map(key));
    const reads = limited.calls.filter((call) => call.method === 'eth_getLogs');
    expect(reads.length).toBeGreaterThan(1);
  });

  it('splits a range refused for its result count (Infura, -32005), also through getContractEvents', async () => {
    const limited = await proxy();
    limited.inject = (call) => {
      if (call.method !== 'eth_getLogs') return undefined;
      const { fromBlock, toBlock } = call.params[0] as { fromBlock: Hex; toBlock: Hex };
      return blockOf(toBlock) - blockOf(fromBlock) > 6n
        ? { rpcError: { code: -32005, message: 'query returned more than 10000 results' } }
        : undefined;
    };
    const head = await direct.getBlockNumber();
    const expected = await direct.getLogs({ address: emitter, fromBlock: 0n, toBlock: head });
    const events = await clientOver(limited.url).getContractEvents({
      address: emitter,
      abi: pingAbi,
      eventName: 'Ping',
      fromBlock: 0n,
      toBlock: head,
    });
    expect(events.map(key)).toEqual(expected.map(key));
    expect(events.every((event) => event.eventName === 'Ping')).toBe(true);
  });

  it('does not split what a smaller range cannot fix: an outage or a rate limit fails as it is', async () => {
    const down = await proxy();
    down.inject = (call) =>
      call.method === 'eth_getLogs'
        ? { rpcError: { code: -32005, message: 'daily request rate limit exceeded' } }
        : undefined;
    const head = await direct.getBlockNumber();
    await expect(clientOver(down.url).getLogs({ address: emitter, fromBlock: 0n, toBlock: head })).rejects.toThrow(
      /rate limit/,
    );
    expect(down.calls.filter((call) => call.method === 'eth_getLogs').length).toBeLessThanOrEqual(2);
    expect(
      isLogRangeRefusal(
        new Error('Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range'),
      ),
    ).toBe(true);
    expect(isLogRangeRefusal(new Error('execution reverted'))).toBe(false);
  });
});

describe('several endpoints per chain', () => {
  it('serves from the next endpoint while the first is down, and asks it again once it answers', async () => {
    const first = await proxy();
    const second = await proxy();
    first.inject = () => ({ status: 503, body: 'upstream unavailable' });
    const client = clientOver(first.url, [second.url]);
    expect(await client.getBlockNumber()).toBe(await direct.getBlockNumber());
    expect(second.calls.length).toBeGreaterThan(0);
    first.inject = () => undefined;
    const before = first.calls.length;
    await client.getChainId();
    expect(first.calls.length).toBeGreaterThan(before);
  });

  it("takes a node's answer as final: a revert is not asked of the next endpoint", async () => {
    const first = await proxy();
    const second = await proxy();
    const client = clientOver(first.url, [second.url]);
    // Calling the zero address with a value from an empty account fails in the node itself.
    await expect(
      client.estimateGas({ account: '0x000000000000000000000000000000000000dEaD', to: emitter, value: 10n ** 30n }),
    ).rejects.toThrow();
    expect(first.calls.some((call) => call.method === 'eth_estimateGas')).toBe(true);
    expect(second.calls.some((call) => call.method === 'eth_estimateGas')).toBe(false);
  });
});

describe('a 429 from a provider', () => {
  it('alone: waits for its Retry-After and sends again, instead of failing', async () => {
    const limited = await proxy();
    let refusals = 1;
    limited.inject = (call) =>
      call.method === 'eth_blockNumber' && refusals-- > 0
        ? { status: 429, headers: { 'retry-after': '1' }, body: 'slow down' }
        : undefined;
    expect(await clientOver(limited.url).getBlockNumber()).toBe(await direct.getBlockNumber());
    const [refused, retried] = limited.calls.filter((call) => call.method === 'eth_blockNumber');
    expect(retried).toBeDefined();
    // The behaviour under test: not a time budget, a floor the provider asked for.
    expect(retried!.at - refused!.at).toBeGreaterThanOrEqual(950);
  });

  it('with a fallback: the next endpoint serves, and the cooling endpoint gets no request until its Retry-After passes', async () => {
    const first = await proxy();
    const second = await proxy();
    first.inject = () => ({ status: 429, headers: { 'retry-after': '30' }, body: 'slow down' });
    const client = clientOver(first.url, [second.url]);
    for (let n = 0; n < 5; n++) await client.getChainId();
    expect(first.calls).toHaveLength(1);
    expect(second.calls.length).toBeGreaterThanOrEqual(5);
  });
});
