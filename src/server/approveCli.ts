/**
 * `npm run approve -- --config <file>`: approves the fill contract for every ERC-20 of every configured chain from
 * the solver's key (`GATEWAY_SOLVER_PRIVATE_KEY`), as the fill path needs; idempotent, prints what it did
 * (`./doctor.ts`). Exits 1 when an approval failed, 2 on a bad command line.
 */
import { privateKeyToAccount } from 'viem/accounts';
import { exitWith, readCliConfig } from './configCli.js';
import { runApprove } from './doctor.js';

const usage = 'Usage: GATEWAY_SOLVER_PRIVATE_KEY=0x... npm run approve -- --config <file>';

exitWith(async () => {
  const read = readCliConfig(usage);
  if (typeof read === 'number') return read;
  const { config } = read;
  const report = await runApprove(config.chains, privateKeyToAccount(config.solverPrivateKey));
  process.stdout.write(`${report.lines.join('\n')}\n`);
  return report.ok ? 0 : 1;
});
