import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { requireChain } from '../../core/chains/requireChain.js';
import type { RestContext } from '../context.js';

/** GET /health: the process is up and serving. */
export async function getHealth(
  _input: OperationInput<'getHealth'>,
  _context: RestContext,
): Promise<OperationOutput<'getHealth'>> {
  return { status: 200, body: { status: 'ok' } };
}

/**
 * GET /ready: 200 when the database and every chain RPC answer (`degraded` when a start-up check of a chain, a
 * token or a price feed fails), 503 with the failing checks otherwise.
 */
export async function getReadiness(
  _input: OperationInput<'getReadiness'>,
  context: RestContext,
): Promise<OperationOutput<'getReadiness'>> {
  const report = await context.readiness();
  return report.ready
    ? { status: 200, body: { status: report.degraded ? 'degraded' : 'ready', checks: report.checks } }
    : { status: 503, body: { status: 'not_ready', checks: report.checks } };
}

/**
 * GET /chains/health: the readiness check of the chain's RPC (it answers, with the configured chain id), and
 * the chain not disabled; every chain when no `chainId` is given.
 */
export async function getChainHealth(
  input: OperationInput<'getChainHealth'>,
  context: RestContext,
): Promise<OperationOutput<'getChainHealth'>> {
  const chains =
    input.query.chainId === undefined ? context.core.config.chains : [requireChain(context.core, input.query.chainId)];
  const report = await context.readiness();
  const healthy = chains.every(
    (chain) =>
      !chain.disabled &&
      report.checks[`chain:${chain.id}`]?.ok === true &&
      report.checks[`solver:${chain.id}`]?.ok !== false,
  );
  return { status: 200, body: { healthy } };
}
