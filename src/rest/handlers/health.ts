import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import type { RestContext } from '../context.js';

/** GET /health: the process is up and serving. */
export async function getHealth(
  _input: OperationInput<'getHealth'>,
  _context: RestContext,
): Promise<OperationOutput<'getHealth'>> {
  return { status: 200, body: { status: 'ok' } };
}

/** GET /ready: 200 when the database and every chain RPC answer, 503 with the failing checks otherwise. */
export async function getReadiness(
  _input: OperationInput<'getReadiness'>,
  context: RestContext,
): Promise<OperationOutput<'getReadiness'>> {
  const report = await context.readiness();
  return report.ready
    ? { status: 200, body: { status: 'ready', checks: report.checks } }
    : { status: 503, body: { status: 'not_ready', checks: report.checks } };
}
