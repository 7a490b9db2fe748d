import type { ChainClients } from '../chain/clients.js';
import type { ReadinessCheck, ReadinessReport } from '../rest/context.js';
import type { FillPause } from '../core/solver/fillGate.js';

const withTimeout = <T>(promise: Promise<T>, ms: number): Promise<T> =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms).unref()),
  ]);

/**
 * Readiness: the database answers and every chain's RPC answers with the configured chain id.
 * A chain whose RPC reports another id is a misconfiguration and makes the gateway not ready.
 */
export async function checkReadiness(database: () => Promise<void>, clients: ChainClients): Promise<ReadinessReport> {
  const checks: Record<string, ReadinessCheck> = {};
  const tasks: Array<Promise<void>> = [
    withTimeout(database(), 3_000).then(
      () => void (checks.database = { ok: true }),
      (error: Error) => void (checks.database = { ok: false, message: error.message }),
    ),
  ];
  for (const [id, client] of clients) {
    tasks.push(
      withTimeout(client.getChainId(), 3_000).then(
        (reported) =>
          void (checks[`chain:${id}`] =
            reported === id
              ? { ok: true }
              : { ok: false, message: `RPC reports chain id ${reported}, expected ${id}` }),
        (error: Error) =>
          void (checks[`chain:${id}`] = { ok: false, message: error.message.split('\n')[0] ?? 'RPC error' }),
      ),
    );
  }
  await Promise.all(tasks);
  const sorted = Object.fromEntries(Object.entries(checks).sort(([a], [b]) => a.localeCompare(b)));
  return { ready: Object.values(sorted).every((c) => c.ok), degraded: false, checks: sorted };
}

/**
 * Adds the start-up checks' findings (`src/server/chainChecks.ts`): a chain the solver does not serve
 * (`solver:<chainId>`), a token it has not approved (`approval:<chainId>:<symbol>`), a stale price feed
 * (`price:<chainId>:<symbol>`). They make the gateway `degraded`, not unready: the other chains and tokens still
 * serve (what needs the failing part is refused with a clear error), and one misconfigured chain must not take
 * the whole instance out of a load balancer.
 */
export function withChainChecks(report: ReadinessReport, findings: Record<string, ReadinessCheck>): ReadinessReport {
  if (Object.keys(findings).length === 0) return report;
  return { ...report, degraded: true, checks: mergeChecks(report.checks, findings) };
}

/** A report's checks with more added, in name order (the order `/ready` shows them in). */
function mergeChecks(
  checks: Record<string, ReadinessCheck>,
  more: Record<string, ReadinessCheck>,
): Record<string, ReadinessCheck> {
  return Object.fromEntries(Object.entries({ ...checks, ...more }).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * Adds a `fills:<chainId>` check per destination chain whose fills the solver has paused (its circuit breaker),
 * with the reason. It reports `ok: true`: the gateway still serves (quotes are refused with a clear error), and a
 * paused chain must not take the whole instance out of a load balancer; the message is for operators.
 */
export function withFillPauses(report: ReadinessReport, pauses: FillPause[]): ReadinessReport {
  if (pauses.length === 0) return report;
  const paused: Record<string, ReadinessCheck> = {};
  for (const pause of pauses) {
    paused[`fills:${pause.chainId}`] = {
      ok: true,
      message: `fills paused since ${new Date(pause.since).toISOString()} (${pause.held} paid request(s) held): ${pause.reason}`,
    };
  }
  return { ...report, checks: mergeChecks(report.checks, paused) };
}

/**
 * Adds a `history:<chainId>` check per chain where the database did not know transactions the solver key made
 * (`SolverRuntime.history`): not ready while the solver waits for the rebuild from chain events, ready once rebuilt
 * (the message stays, for operators).
 */
export function withSolverHistory(
  report: ReadinessReport,
  history: ReadonlyMap<number, { ok: boolean; message: string }>,
): ReadinessReport {
  if (history.size === 0) return report;
  const rebuilt: Record<string, ReadinessCheck> = {};
  for (const [chainId, check] of history) rebuilt[`history:${chainId}`] = check;
  const checks = mergeChecks(report.checks, rebuilt);
  return { ...report, ready: Object.values(checks).every((c) => c.ok), checks };
}
