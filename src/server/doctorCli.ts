/**
 * `npm run doctor -- --config <file>`: runs every start-up check of the configured chains without starting the
 * gateway (`./doctor.ts`) and prints what to fix; exits 1 when something is wrong, 2 on a bad command line.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { privateKeyToAccount } from 'viem/accounts';
import { ConfigError } from './config.js';
import { parseConfigFile } from './configFile.js';
import { runDoctor } from './doctor.js';

const usage = 'Usage: GATEWAY_SOLVER_PRIVATE_KEY=0x... npm run doctor -- --config <file>';

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { config: { type: 'string' }, help: { type: 'boolean' } } });
  const file = values.config ?? process.env.GATEWAY_CONFIG;
  if (values.help === true || file === undefined || file === '') {
    process.stderr.write(`${usage}\n`);
    return values.help === true ? 0 : 2;
  }
  let config;
  try {
    // The chains and the key only: this command opens no database, so none needs to be named.
    config = parseConfigFile(readFileSync(file, 'utf8'), process.env, file);
  } catch (error) {
    const message =
      error instanceof ConfigError
        ? error.message
        : `cannot read config file ${file}: ${error instanceof Error ? error.message : String(error)}`;
    process.stdout.write(`✗ ${message}\n`);
    return 1;
  }
  const report = await runDoctor(config.chains, privateKeyToAccount(config.solverPrivateKey).address, file);
  process.stdout.write(`${report.lines.join('\n')}\n`);
  return report.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
