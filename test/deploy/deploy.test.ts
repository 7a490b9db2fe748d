/**
 * `npm run deploy` against a fresh anvil, run as an operator would (a child process, the key in the
 * environment): every contract it prints has code on the chain, the solver owns what it must, and the printed
 * block drops into a config file the gateway loads. Also: docs/real-networks.md's config example loads.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  createPublicClient,
  createWalletClient,
  encodeAbiParameters,
  http,
  pad,
  parseAbi,
  type Address,
  type Hex,
} from 'viem';
import { createCaliburExecutor } from '@relayprotocol/relay-sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startAnvil, type AnvilInstance } from '../../src/chain/anvil.js';
import { ANVIL_MNEMONIC } from '../../src/chain/devnet.js';
import { loadConfigFile, parseConfigFile } from '../../src/server/configFile.js';
import { mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';

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

it('deploys every contract to a fresh chain and writes the config block to --out', async () => {
  const out = join(await mkdtemp(join(tmpdir(), 'gateway-deploy-')), 'chain.json');
  // As docs/real-networks.md has it: without --silent, npm's banner goes to stdout, never into the file.
  const { stdout, stderr } = await run(
    'npm',
    ['run', 'deploy', '--', '--rpc-url', anvil.rpcUrl, '--solver', solver.address, '--out', out],
    {
      env: { ...process.env, GATEWAY_DEPLOYER_PRIVATE_KEY: deployerKey },
    },
  );
  expect(stdout).not.toContain('"contracts"');
  expect(stderr).toContain(`contracts written to ${out}`);
  const { contracts } = JSON.parse(await readFile(out, 'utf8')) as { contracts: Record<string, Address> };
  expect(Object.keys(contracts).sort()).toEqual([
    'approvalProxy',
    'attestationVerifier',
    'batchExecutor',
    'depositAddressFactory',
    'depository',
    'erc20Router',
    'multicall3',
    'multicaller',
    'onlyOwnerMulticaller',
    'receiver',
    'swapDepositRouter',
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
  expect(config.chains[0]!.contracts.batchExecutor).toBe(contracts.batchExecutor);
  deployedExecutor = contracts.batchExecutor!;
});

let deployedExecutor: Address;

it("the deployed batch executor runs a gasless batch at its own address, signed as the SDK signs for it (its address as the domain's salt); the SDK's default salt is refused", async () => {
  const client = createPublicClient({ transport: http(anvil.rpcUrl) });
  const chainId = await client.getChainId();
  const user = privateKeyToAccount(
    `0x${Buffer.from(mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: 7 }).getHdKey().privateKey!).toString('hex')}`,
  );
  const relayer = createWalletClient({
    account: mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: 8 }),
    transport: http(anvil.rpcUrl),
  });
  const recipient: Address = '0x00000000000000000000000000000000005e0001';
  const calibur = createCaliburExecutor();
  // What docs/real-networks.md tells integrators to pass as `executeGaslessBatch({ executor })`.
  const executor = {
    ...calibur,
    address: deployedExecutor,
    salt: pad(deployedExecutor, { size: 32 }),
    buildSignDomain: (id: number, verifyingContract: Address) => ({
      ...calibur.buildSignDomain(id, verifyingContract),
      salt: pad(deployedExecutor, { size: 32 }),
    }),
  };
  const message = executor.buildSignMessage(
    [{ to: recipient, value: 12_345n, data: '0x' }],
    await executor.getNonce(client, user.address),
  );
  const signWith = async (domain: ReturnType<typeof executor.buildSignDomain>): Promise<Hex> =>
    executor.encodeExecute(
      message,
      encodeAbiParameters(
        [{ type: 'bytes' }, { type: 'bytes' }],
        [
          await user.signTypedData({
            domain,
            types: executor.eip712Types as any,
            primaryType: 'SignedBatchedCall',
            message,
          }),
          '0x',
        ],
      ),
    );
  const authorization = await user.signAuthorization({
    address: deployedExecutor,
    chainId,
    nonce: await client.getTransactionCount({ address: user.address }),
  });
  const send = (data: Hex) =>
    relayer.sendTransaction({ chain: null, to: user.address, data, authorizationList: [authorization] });

  // Signed over the SDK's default domain (Calibur's address as salt): the executor refuses it.
  await expect(
    client.estimateGas({
      account: relayer.account,
      to: user.address,
      data: await signWith(calibur.buildSignDomain(chainId, user.address)),
      authorizationList: [authorization],
    }),
  ).rejects.toThrow();

  const before = await client.getBalance({ address: recipient });
  const hash = await send(await signWith(executor.buildSignDomain(chainId, user.address)));
  const receipt = await client.waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe('success');
  expect((await client.getBalance({ address: recipient })) - before).toBe(12_345n);
  expect((await client.getCode({ address: user.address }))?.toLowerCase()).toBe(
    `0xef0100${deployedExecutor.slice(2).toLowerCase()}`,
  );
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
