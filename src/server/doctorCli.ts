/**
 * `npm run doctor -- --config <file>`: runs every start-up check of the configured chains without starting the
 * gateway (`./doctor.ts`) and prints what to fix; exits 1 when something is wrong, 2 on a bad command line.
 */
import { privateKeyToAccount } from 'viem/accounts';
import { exitWith, readCliConfig } from './configCli.js';
import { runDoctor } from './doctor.js';

const usage = 'Usage: GATEWAY_SOLVER_PRIVATE_KEY=0x... npm run doctor -- --config <file>';

exitWith(async () => {
  const read = readCliConfig(usage);
  if (typeof read === 'number') return read;
  const { config, file } = read;
  const report = await runDoctor(config.chains, privateKeyToAccount(config.solverPrivateKey).address, file, {
    settings: config,
    env: process.env,
  });
  process.stdout.write(`${report.lines.join('\n')}\n`);
  return report.ok ? 0 : 1;
});
