/**
 * `npm run deploy` against a fresh anvil, run as an operator would (a child process, the key in the
 * environment): every contract it prints has code on the chain, the solver owns what it must, and the printed
 * block drops into a config file the gateway loads. Also: docs/real-networks.md's config example loads.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { createPublicClient, http, parseAbi, type Address } from 'viem';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startAnvil, type AnvilInstance } from '../../src/chain/anvil.js';
import { ANVIL_MNEMONIC } from '../../src/chain/devnet.js';
import { loadConfigFile, parseConfigFile } from '../../src/server/config.js';
import { mnemonicToAccount } from 'viem/accounts';

const run = promisify(execFile);
let anvil: AnvilInstance;

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 84532 });
});
afterAll(async () => {
  await anvil?.stop();
});

const deployer = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: 5 });
const solver = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: 6 });
const deployerKey = `0x${Buffer.from(deployer.getHdKey().privateKey!).toString('hex')}`;
const solverKey = `0x${Buffer.from(solver.getHdKey().privateKey!).toString('hex')}`;

it('deploys every contract to a fresh chain and prints the config block', async () => {
  const { stdout, stderr } = await run(
    'npm',
    ['run', '--silent', 'deploy', '--', '--rpc-url', anvil.rpcUrl, '--solver', solver.address],
    {
      env: { ...process.env, GATEWAY_DEPLOYER_PRIVATE_KEY: deployerKey },
    },
  );
  const { contracts } = JSON.parse(stdout) as { contracts: Record<string, Address> };
  expect(Object.keys(contracts).sort()).toEqual([
    'approvalProxy',
    'attestationVerifier',
    'depositAddressFactory',
    'depository',
    'erc20Router',
    'multicall3',
    'multicaller',
    'onlyOwnerMulticaller',
    'receiver',
  ]);
  expect(stderr).toContain('depository: ');
  const client = createPublicClient({ transport: http(anvil.rpcUrl) });
  for (const [name, address] of Object.entries(contracts))
    expect((await client.getCode({ address }))?.length ?? 0, name).toBeGreaterThan(2);
  const owner = parseAbi(['function owner() view returns (address)']);
  expect(await client.readContract({ address: contracts.depository!, abi: owner, functionName: 'owner' })).toBe(
    solver.address,
  );
  expect(
    await client.readContract({ address: contracts.onlyOwnerMulticaller!, abi: owner, functionName: 'owner' }),
  ).toBe(solver.address);
  expect(
    await client.readContract({ address: contracts.depositAddressFactory!, abi: owner, functionName: 'owner' }),
  ).toBe(solver.address);

  // The printed block is a chain's `contracts` in a config file the gateway accepts.
  const example = JSON.parse(await readFile(new URL('../../docs/real-networks.example.json', import.meta.url), 'utf8'));
  example.chains[0].contracts = contracts;
  const config = parseConfigFile(JSON.stringify(example), { GATEWAY_SOLVER_PRIVATE_KEY: solverKey }, 'deployed.json');
  expect(config.chains[0]!.contracts.depository).toBe(contracts.depository);
});

it('refuses to run without a key, naming what is missing', async () => {
  const failed = await run(
    'npm',
    ['run', '--silent', 'deploy', '--', '--rpc-url', anvil.rpcUrl, '--solver', solver.address],
    {
      env: { ...process.env, GATEWAY_DEPLOYER_PRIVATE_KEY: '' },
    },
  ).then(
    () => null,
    (error: { code: number; stderr: string }) => error,
  );
  expect(failed?.code).toBe(2);
  expect(failed?.stderr).toContain('GATEWAY_DEPLOYER_PRIVATE_KEY must be');
});

it("docs/real-networks.md's config example loads as it is", () => {
  const config = loadConfigFile(new URL('../../docs/real-networks.example.json', import.meta.url).pathname, {
    GATEWAY_SOLVER_PRIVATE_KEY: solverKey,
    DATABASE_URL: 'postgres://gateway@127.0.0.1:5432/gateway',
  });
  expect(config.chains.map((chain) => chain.id)).toEqual([11155111, 84532]);
  expect(config.databaseUrl).toBe('postgres://gateway@127.0.0.1:5432/gateway');
});
