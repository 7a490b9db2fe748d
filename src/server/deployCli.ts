/**
 * `npm run deploy -- --rpc-url <url> --solver <address> [--out <file>]`: deploys the gateway's contracts to one
 * chain with the key in `GATEWAY_DEPLOYER_PRIVATE_KEY` (kept out of the command line) and writes the chain's
 * `contracts` block for the config file as JSON to `--out`, or to stdout; progress goes to stderr. `--out` is the
 * way to keep it: npm prints its own banner on stdout before the script's output (unless `--silent`), so a
 * redirected stdout is not clean JSON. See docs/real-networks.md.
 */
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { createPublicClient, http, isAddress, isHex, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { deployContracts } from '../chain/deployContracts.js';

const usage = `Usage: GATEWAY_DEPLOYER_PRIVATE_KEY=0x... npm run deploy -- --rpc-url <url> --solver <address> [--out <file>]

  --rpc-url <url>     HTTP RPC URL of the chain
  --solver <address>  The solver's address (owner of the depository and fill contract)
  --out <file>        Write the JSON to this new file (refused if it exists) instead of stdout

Writes {"contracts": {...}} for the chain's entry in the config file.`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'rpc-url': { type: 'string' },
      solver: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help === true) {
    process.stdout.write(`${usage}\n`);
    return;
  }
  const key = process.env.GATEWAY_DEPLOYER_PRIVATE_KEY;
  const problems: string[] = [];
  if (values['rpc-url'] === undefined || !/^https?:\/\//.test(values['rpc-url']))
    problems.push('--rpc-url must be an http(s) URL');
  if (values.solver === undefined || !isAddress(values.solver)) problems.push('--solver must be an address');
  if (values.out !== undefined && values.out.length === 0) problems.push('--out must name a file');
  if (key === undefined || !isHex(key) || key.length !== 66)
    problems.push('GATEWAY_DEPLOYER_PRIVATE_KEY must be a 32-byte hex private key');
  if (problems.length > 0) {
    process.stderr.write(`${problems.join('\n')}\n\n${usage}\n`);
    process.exitCode = 2;
    return;
  }
  // Read before the first deployment transaction: a rebuild from chain events starts here (`deploymentBlock`).
  const deploymentBlock = Number(
    await createPublicClient({ transport: http(values['rpc-url']) }).getBlockNumber({ cacheTime: 0 }),
  );
  const contracts = await deployContracts({
    rpcUrl: values['rpc-url']!,
    deployer: privateKeyToAccount(key as Hex),
    solver: values.solver as Address,
    onProgress: (message) => process.stderr.write(`${message}\n`),
  });
  const json = `${JSON.stringify({ contracts, deploymentBlock }, null, 2)}\n`;
  if (values.out === undefined) {
    process.stdout.write(json);
    return;
  }
  // `wx`: an existing file (another chain's block, a config) is never overwritten by a deployment.
  await writeFile(values.out, json, { flag: 'wx' }).catch((error: unknown) => {
    // The contracts are deployed: print them rather than lose them.
    process.stdout.write(json);
    throw new Error(`could not write ${values.out} (${(error as Error).message}); the block is printed above`);
  });
  process.stderr.write(`contracts written to ${values.out}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`Deployment failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
