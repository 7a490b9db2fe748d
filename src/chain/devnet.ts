import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { defineChain, toHex, type Chain } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { startAnvil, type AnvilInstance } from './anvil.js';
import { deployChain } from './devnetContracts.js';
import type { DevnetAccount, DevnetChain, DevnetDescriptor } from './devnetDescriptor.js';

export type { DevnetAccount, DevnetChain, DevnetDescriptor, DevnetToken } from './devnetDescriptor.js';
export { SDK_BATCH_EXECUTOR } from './devnetContracts.js';

export interface StartDevnetParameters {
  /** Chain ids to start; defaults to 31337, 31338, 31339. */
  chains?: number[];
  /** Port of the first chain, the next ones follow; 0 (the default) = free ports. */
  basePort?: number;
  /** Seconds between blocks; undefined = automine. */
  blockTime?: number | undefined;
  /** Number of funded test accounts (anvil accounts 2, 3, ...); defaults to 4. */
  accountCount?: number;
  /** Short human-readable progress messages. */
  onProgress?: (message: string) => void;
}

export interface Devnet {
  descriptor: DevnetDescriptor;
  /** Process ids of the anvil nodes, in the order of `descriptor.chains`. */
  pids: number[];
  /** Stops every anvil node; safe to call twice. */
  stop: () => Promise<void>;
}

/** The mnemonic anvil derives its prefunded accounts from. */
export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk';
export const DEFAULT_DEVNET_CHAIN_IDS: readonly number[] = [31337, 31338, 31339];

/**
 * Starts local anvil chains and deploys the gateway's contracts, test tokens and price feeds on each,
 * so the whole system runs on one machine. Deployments are sent as nonce-ordered batches and
 * awaited together, so interval mining (`blockTime`) costs a few blocks, not one per transaction.
 * Addresses are the same on every chain (same deployer, same nonces).
 *
 * @throws the first startup or deployment error, after stopping every node already started.
 */
export async function startDevnet(parameters: StartDevnetParameters = {}): Promise<Devnet> {
  const { chains = DEFAULT_DEVNET_CHAIN_IDS, basePort = 0, blockTime, accountCount = 4, onProgress } = parameters;
  const progress = onProgress ?? (() => {});
  const deployer = anvilAccount(0);
  const solver = anvilAccount(1);
  const accounts = Array.from({ length: accountCount }, (_, i) => anvilAccount(i + 2));

  const started = await Promise.allSettled(
    chains.map((chainId, index) => {
      const port = basePort === 0 ? 0 : basePort + index;
      progress(`starting chain ${chainId} on ${port === 0 ? 'a free port' : `:${port}`}`);
      return startAnvil({ chainId, port, blockTime });
    }),
  );
  const instances = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const stop = once(() => Promise.all(instances.map((instance) => instance.stop())).then(() => undefined));
  await throwFirstRejection(started, stop);

  const deployed = await Promise.allSettled(
    instances.map(async (instance, index) => {
      progress(`deploying contracts on ${instance.chainId} (${instance.rpcUrl})`);
      const chain = await deployChain(instance, index, blockTime ?? null, { deployer, solver, accounts });
      progress(`chain ${instance.chainId} ready`);
      return chain;
    }),
  );
  await throwFirstRejection(deployed, stop);
  if (blockTime !== undefined) {
    try {
      await staggerBlockPhases(instances, blockTime);
    } catch (error) {
      await stop();
      throw error;
    }
  }

  const descriptor: DevnetDescriptor = {
    version: 1,
    createdAt: new Date().toISOString(),
    solver,
    deployer,
    accounts,
    chains: deployed.map((result) => (result as PromiseFulfilledResult<DevnetChain>).value),
  };
  return { descriptor, pids: instances.map((instance) => instance.pid), stop };
}

/**
 * Sets each chain's block phase on purpose: chain i's interval-mining timer restarts i/n of a block after chain 0's
 * (`evm_setIntervalMining` restarts anvil's timer when called). Left alone, every node's `--block-time` timer
 * starts when its process starts, so all chains mine within a few ms of one another, and a fill sent after an
 * origin block cannot make the destination block that follows it a few ms later: every bridge would then wait a
 * whole extra block, or not, by the luck of the start. Staggered, any origin → destination pair is offset by 1/n
 * or (n−1)/n of a block (⅓ or ⅔ with three chains). Nodes on one machine share its clock, so the phases stay put.
 * A devnet property only: real chains have unrelated phases. Skipped for one chain and for a fractional block
 * time (`evm_setIntervalMining` takes whole seconds).
 */
async function staggerBlockPhases(instances: AnvilInstance[], blockTime: number): Promise<void> {
  if (instances.length < 2 || !Number.isInteger(blockTime)) return;
  // A call first on each node, so the timed calls below do not also open connections.
  await Promise.all(instances.map((instance) => anvilRpc(instance.rpcUrl, 'eth_chainId', [])));
  const stepMs = (blockTime * 1_000) / instances.length;
  const start = performance.now();
  await Promise.all(
    instances.map(async (instance, index) => {
      const delay = start + index * stepMs - performance.now();
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      await anvilRpc(instance.rpcUrl, 'evm_setIntervalMining', [blockTime]);
    }),
  );
}

async function anvilRpc(rpcUrl: string, method: string, params: unknown[]): Promise<unknown> {
  const response = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(5_000),
  });
  const body = (await response.json()) as { result?: unknown; error?: { message?: string } };
  if (body.error !== undefined) throw new Error(`${method} on ${rpcUrl} failed: ${body.error.message ?? 'error'}`);
  return body.result;
}

/** Writes the descriptor as JSON (creating the directory) for the gateway and for humans. */
export async function writeDevnetDescriptor(path: string, descriptor: DevnetDescriptor): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const json = JSON.stringify(
    descriptor,
    (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value),
    2,
  );
  await writeFile(path, `${json}\n`);
}

/** A viem chain for a devnet chain, with its Multicall3 so `client.multicall` works. */
export function devnetViemChain(chain: DevnetChain): Chain {
  return defineChain({
    id: chain.chainId,
    name: chain.name,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [chain.rpcUrl], webSocket: [chain.wsUrl] } },
    contracts: { multicall3: { address: chain.contracts.multicall3 } },
    testnet: true,
  });
}

/** Anvil's prefunded account `index` (same keys as `anvil` prints at startup). */
function anvilAccount(index: number): DevnetAccount {
  const account = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: index });
  return { address: account.address, privateKey: toHex(account.getHdKey().privateKey!) };
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let promise: Promise<void> | undefined;
  return () => (promise ??= fn());
}

async function throwFirstRejection(
  results: PromiseSettledResult<unknown>[],
  cleanup: () => Promise<void>,
): Promise<void> {
  const rejected = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (!rejected) return;
  await cleanup();
  throw rejected.reason;
}
