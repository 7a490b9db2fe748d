import { formatEther, type Address } from 'viem';
import { createChainClients } from '../chain/clients.js';
import { approveFillTokens, type ApprovalOutcome, type ChainFinding } from '../chain/startupChecks.js';
import type { ChainConfig } from '../core/chains/types.js';
import { runChainChecks } from './chainChecks.js';
import type { Env } from './config.js';
import { checkDatabase, type DoctorDatabaseSettings } from './doctorDatabase.js';

/** What `npm run doctor` found: one line per chain or problem, and whether anything needs fixing. */
export interface DoctorReport {
  ok: boolean;
  lines: string[];
}

const chainLabel = (chain: ChainConfig) => `chain ${chain.id} (${chain.displayName})`;

function fixOf(finding: ChainFinding, configFile: string): string {
  switch (finding.kind) {
    case 'chain':
      return /reports chain id/.test(finding.message)
        ? 'fix: give this chain the RPC URL of its own network'
        : /owned by/.test(finding.message)
          ? "fix: start the gateway with the solver's key the contracts were deployed for (GATEWAY_SOLVER_PRIVATE_KEY), or deploy the contracts for this solver (npm run deploy -- --solver <address>)"
          : "fix: copy this chain's contracts block from the output of npm run deploy for this chain";
    case 'approval':
      return `fix: npm run approve -- --config ${configFile}`;
    case 'price':
      return "fix: the feed's owner publishes a new answer (a PriceFeed you deployed: setAnswer), or point price.feed at a live feed";
  }
}

/**
 * Every start-up check the gateway makes of its chains, without starting it (`npm run doctor`): each chain's
 * RPC answers with the configured chain id, every configured contract has code, the depository and the fill
 * contract are owned by the solver, the solver has approved the fill contract for each ERC-20, every price feed
 * with a `maxAgeSeconds` is fresh, and the solver has gas on each chain. With `database`, the configured database
 * too (`checkDatabase`): it answers, its version, no gateway holds it, and the solver key it was used with.
 */
export async function runDoctor(
  chains: ChainConfig[],
  solver: Address,
  configFile: string,
  database?: { settings: DoctorDatabaseSettings; env: Env },
): Promise<DoctorReport> {
  const clients = createChainClients(chains);
  const [{ findings, unreachable }, stored] = await Promise.all([
    runChainChecks(chains, clients, solver),
    database === undefined ? undefined : checkDatabase(database.settings, solver, database.env),
  ]);
  const lines: string[] = [`solver ${solver}`, ...(stored?.lines ?? [])];
  let ok = stored?.ok ?? true;
  for (const chain of chains) {
    if (unreachable.includes(chain.id)) {
      ok = false;
      lines.push(`✗ ${chainLabel(chain)}: its RPC (httpRpcUrl) does not answer`);
      lines.push('    fix: check the URL and the provider key, and that the provider serves this network');
      continue;
    }
    const problems = findings.filter((finding) => finding.chainId === chain.id);
    const gas = await clients
      .get(chain.id)!
      .getBalance({ address: solver })
      .catch(() => null);
    if (gas === 0n && !problems.some((finding) => finding.kind === 'chain')) {
      problems.push({
        kind: 'chain',
        chainId: chain.id,
        message: `the solver has no ${chain.nativeCurrency.symbol} for gas`,
      });
    }
    if (problems.length === 0) {
      lines.push(
        `✓ ${chainLabel(chain)}: network, contracts, owner, approvals and price feeds` +
          (gas === null ? '' : `; solver holds ${formatEther(gas)} ${chain.nativeCurrency.symbol}`),
      );
      continue;
    }
    ok = false;
    for (const finding of problems) {
      lines.push(`✗ ${chainLabel(chain)}: ${finding.message}`);
      lines.push(
        `    ${
          /for gas$/.test(finding.message)
            ? `fix: send ${chain.nativeCurrency.symbol} to ${solver} on this chain`
            : fixOf(finding, configFile)
        }`,
      );
    }
  }
  lines.push(ok ? 'Everything the gateway checks at start passes.' : 'Fix the lines marked ✗, then run this again.');
  return { ok, lines };
}

/** `npm run approve`: `approveFillTokens` on every chain, one line per token. */
export async function runApprove(
  chains: ChainConfig[],
  account: Parameters<typeof approveFillTokens>[2],
): Promise<DoctorReport> {
  const clients = createChainClients(chains);
  const lines: string[] = [`solver ${account.address}`];
  let ok = true;
  for (const chain of chains) {
    let outcomes: ApprovalOutcome[];
    try {
      outcomes = await approveFillTokens(chain, clients.get(chain.id)!, account);
    } catch (error) {
      ok = false;
      lines.push(`✗ ${chainLabel(chain)}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
      continue;
    }
    if (outcomes.length === 0) lines.push(`  ${chainLabel(chain)}: no ERC-20 currencies, nothing to approve`);
    for (const outcome of outcomes) {
      const what = `${chainLabel(chain)} ${outcome.symbol} (${outcome.token})`;
      if (outcome.action === 'approved')
        lines.push(
          `✓ ${what}: approved the fill contract ${chain.contracts.onlyOwnerMulticaller} (tx ${outcome.transactionHash})`,
        );
      else if (outcome.action === 'kept') lines.push(`  ${what}: already approved, nothing sent`);
      else {
        ok = false;
        lines.push(`✗ ${what}: ${outcome.message}`);
      }
    }
  }
  return { ok, lines };
}
