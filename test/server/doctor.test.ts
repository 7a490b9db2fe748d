/**
 * `npm run doctor` and `npm run approve`, run as the operator runs them (child processes on a config file) against
 * a devnet the gateway does not run: the doctor names a revoked approval and exits 1; `approve` sets what is
 * missing, says what it kept and changes nothing the second time; the doctor then passes (exit 0). A solver key
 * that does not own the contracts and an RPC of another chain are named with what to fix.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, erc20Abi, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devnetViemChain, startDevnet, type Devnet, type DevnetChain } from '../../src/chain/devnet.js';
import type { ChainConfig, CurrencyConfig } from '../../src/core/chains/types.js';
import { devnetChainConfigs } from '../../src/server/devnetConfig.js';
import { root, tsx, useChildProcesses } from '../helpers/childProcess.js';
import { publicClientOf, tokenOf } from '../helpers/quote.js';

const spawnWatched = useChildProcesses();

let devnet: Devnet;
let dir: string;

beforeAll(async () => {
  devnet = await startDevnet({ basePort: 0 });
  dir = mkdtempSync(path.join(tmpdir(), 'doctor-'));
}, 120_000);
afterAll(async () => {
  await devnet?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const currencyFile = (currency: CurrencyConfig) => ({
  id: currency.id,
  symbol: currency.symbol,
  name: currency.name,
  address: currency.address,
  decimals: currency.decimals,
  ...(currency.price === undefined ? {} : { price: currency.price }),
});

/** The devnet's chains as an operator's config file. */
function writeConfig(name: string, change: (chain: ChainConfig) => ChainConfig = (chain) => chain): string {
  const chains = devnetChainConfigs(devnet.descriptor)
    .map(change)
    .map((chain) => ({
      id: chain.id,
      name: chain.name,
      displayName: chain.displayName,
      httpRpcUrl: chain.httpRpcUrl,
      confirmations: 1,
      blockTime: 1,
      nativeCurrency: currencyFile(chain.nativeCurrency),
      currencies: chain.currencies.map(currencyFile),
      contracts: chain.contracts,
    }));
  const file = path.join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ chains }, null, 2));
  return file;
}

async function run(
  cli: 'doctor' | 'approve',
  file: string,
  key: Hex = devnet.descriptor.solver.privateKey,
): Promise<{ code: number | null; output: string }> {
  const child = spawnWatched(process.execPath, [tsx, path.join(root, `src/server/${cli}Cli.ts`), '--config', file], {
    env: { GATEWAY_SOLVER_PRIVATE_KEY: key },
  });
  const code = await child.exited;
  return { code, output: child.output() };
}

describe('npm run doctor / npm run approve', () => {
  it('names a revoked approval; approve repairs it, idempotently; the doctor then passes', async () => {
    const chainB = devnet.descriptor.chains[1] as DevnetChain;
    const usdc = tokenOf(chainB, 'USDC');
    const wallet = createWalletClient({
      account: privateKeyToAccount(devnet.descriptor.solver.privateKey),
      chain: devnetViemChain(chainB),
      transport: http(chainB.rpcUrl),
    });
    const hash = await wallet.writeContract({
      address: usdc,
      abi: erc20Abi,
      functionName: 'approve',
      args: [chainB.contracts.onlyOwnerMulticaller, 0n],
    });
    await publicClientOf(chainB).waitForTransactionReceipt({ hash });
    const file = writeConfig('gateway');

    const sick = await run('doctor', file);
    expect(sick.code, sick.output).toBe(1);
    expect(sick.output).toMatch(/✗ chain 31338 \(Devnet B\): the solver's approval of USDC .* is 0, below its balance/);
    expect(sick.output).toContain(`fix: npm run approve -- --config ${file}`);
    expect(sick.output).toMatch(/✓ chain 31337 \(Devnet A\)/);

    const approved = await run('approve', file);
    expect(approved.code, approved.output).toBe(0);
    expect(approved.output).toMatch(
      /✓ chain 31338 \(Devnet B\) USDC \(0x[0-9a-fA-F]{40}\): approved the fill contract/,
    );
    expect(approved.output).toMatch(
      /chain 31337 \(Devnet A\) USDC \(0x[0-9a-fA-F]{40}\): already approved, nothing sent/,
    );
    expect(approved.output.match(/: approved the fill contract/g)).toHaveLength(1);
    const allowance = await publicClientOf(chainB).readContract({
      address: usdc,
      abi: erc20Abi,
      functionName: 'allowance',
      args: [devnet.descriptor.solver.address, chainB.contracts.onlyOwnerMulticaller],
    });
    expect(allowance).toBe(2n ** 256n - 1n);

    const again = await run('approve', file);
    expect(again.code, again.output).toBe(0);
    expect(again.output).not.toMatch(/approved the fill contract/);

    const healthy = await run('doctor', file);
    expect(healthy.code, healthy.output).toBe(0);
    expect(healthy.output).toContain('Everything the gateway checks at start passes.');
  });

  it('names a key that does not own the contracts and an RPC of another chain, with what to fix', async () => {
    const chainC = devnet.descriptor.chains[2] as DevnetChain;
    const file = writeConfig('wrong', (chain) =>
      chain.id === 31338 ? { ...chain, httpRpcUrl: chainC.rpcUrl } : chain,
    );
    const wrongKey = devnet.descriptor.accounts[0]!;
    const result = await run('doctor', file, wrongKey.privateKey);
    expect(result.code, result.output).toBe(1);
    expect(result.output).toContain(
      `✗ chain 31337 (Devnet A): contracts.depository ${devnet.descriptor.chains[0]!.contracts.depository} is owned by ${devnet.descriptor.solver.address}, not by the solver ${wrongKey.address}`,
    );
    expect(result.output).toMatch(/fix: start the gateway with the solver's key the contracts were deployed for/);
    expect(result.output).toContain('✗ chain 31338 (Devnet B): the RPC reports chain id 31339, expected 31338');
    expect(result.output).toContain('fix: give this chain the RPC URL of its own network');

    // approve refuses to send anything through an RPC of another network.
    const refused = await run('approve', file);
    expect(refused.code, refused.output).toBe(1);
    expect(refused.output).toContain(
      '✗ chain 31338 (Devnet B): chain 31338: the RPC reports chain id 31339; nothing was approved on it',
    );
  });
});
