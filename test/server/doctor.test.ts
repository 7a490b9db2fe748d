/**
 * `npm run doctor` and `npm run approve`, run as the operator runs them (child processes on a config file) against
 * a devnet the gateway does not run: the doctor names a revoked approval and exits 1; `approve` sets what is
 * missing, says what it kept and changes nothing the second time; the doctor then passes (exit 0). A solver key
 * that does not own the contracts and an RPC of another chain are named with what to fix. The database: a missing
 * one, one no server answers for, a PGlite directory a running process holds, its version (current, or the
 * migrations the next start applies) and a database used with another solver key.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, erc20Abi, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { Migrator } from 'kysely/migration';
import { devnetViemChain, startDevnet, type Devnet, type DevnetChain } from '../../src/chain/devnet.js';
import type { ChainConfig, CurrencyConfig } from '../../src/core/chains/types.js';
import { devnetChainConfigs } from '../../src/server/devnetConfig.js';
import { createDatabase } from '../../src/store/database.js';
import { migrations } from '../../src/store/migrations/index.js';
import { recordSolverNonce } from '../../src/store/solverNonces.repository.js';
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
  // The chain checks' tests run without a database on purpose; the database's tests name one.
  database: Record<string, string> = { GATEWAY_IN_MEMORY_DATABASE: 'true' },
): Promise<{ code: number | null; output: string }> {
  const child = spawnWatched(process.execPath, [tsx, path.join(root, `src/server/${cli}Cli.ts`), '--config', file], {
    env: { GATEWAY_SOLVER_PRIVATE_KEY: key, DATABASE_URL: '', GATEWAY_DATA_DIR: '', ...database },
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

  it('checks the database: missing, unreachable, held by a running process, its version, its solver key', async () => {
    const file = writeConfig('database');
    const solver = devnet.descriptor.solver.address;

    const missing = await run('doctor', file, undefined, {});
    expect(missing.code, missing.output).toBe(1);
    expect(missing.output).toContain(
      '✗ database: no database is configured: set DATABASE_URL (PostgreSQL) or GATEWAY_DATA_DIR',
    );

    const unreachable = await run('doctor', file, undefined, {
      DATABASE_URL: 'postgres://gateway:s3cret@127.0.0.1:1/gateway',
    });
    expect(unreachable.code, unreachable.output).toBe(1);
    expect(unreachable.output).toMatch(/✗ database: PostgreSQL does not answer: Cannot open the database at /);
    expect(unreachable.output).not.toContain('s3cret');

    const dataDir = path.join(dir, 'pglite');
    const fresh = await run('doctor', file, undefined, { GATEWAY_DATA_DIR: dataDir });
    expect(fresh.code, fresh.output).toBe(0);
    expect(fresh.output).toContain(
      `✓ database: PGlite at ${dataDir} is empty: created and migrated at the first start`,
    );

    // A database an older version left: its first migration applied only.
    const names = Object.keys(migrations).sort();
    let database = await createDatabase({ dataDir });
    const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => migrations } });
    expect((await migrator.migrateTo(names[0]!)).error).toBeUndefined();
    // While a process holds the directory, the doctor does not open it and names the holder.
    const held = await run('doctor', file, undefined, { GATEWAY_DATA_DIR: dataDir });
    expect(held.code, held.output).toBe(1);
    expect(held.output).toContain(`✗ database: PGlite at ${dataDir} is held by process ${process.pid}`);
    expect(held.output).toContain('fix: stop that gateway');
    await database.close();

    const older = await run('doctor', file, undefined, { GATEWAY_DATA_DIR: dataDir });
    expect(older.code, older.output).toBe(0);
    expect(older.output).toContain(
      `✓ database: PGlite at ${dataDir} answers; ${names.length - 1} migration(s) pending (${names[1]} to ${names.at(-1)}): applied at the next start`,
    );

    database = await createDatabase({ dataDir });
    await database.migrate();
    await recordSolverNonce(database.db, { chainId: 31337, signer: solver, nonce: 3n, now: Date.now() });
    await database.close();
    const current = await run('doctor', file, undefined, { GATEWAY_DATA_DIR: dataDir });
    expect(current.code, current.output).toBe(0);
    expect(current.output).toContain(
      `✓ database: PGlite at ${dataDir} answers and is migrated to the current version (${names.at(-1)})`,
    );
    expect(current.output).toContain('Everything the gateway checks at start passes.');

    // The same database with another key: the key-to-database rule.
    const other = devnet.descriptor.accounts[0]!;
    const wrongKey = await run('doctor', file, other.privateKey, { GATEWAY_DATA_DIR: dataDir });
    expect(wrongKey.code, wrongKey.output).toBe(1);
    expect(wrongKey.output).toContain(
      `✗ database: it was used with another solver key (${solver.toLowerCase()}), not the configured ${other.address}`,
    );
    expect(wrongKey.output).toContain('fix: One solver key, one database, ever');
  });
});
