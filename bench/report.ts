/** Turns load results into the benchmark's tables and verdicts (plain text, no colours: it is pasted into issues). */
import { percentile, type ErrorTally, type LoadResult } from './load.js';
import type { ThreadCpu } from './serverProcess.js';

/** One measured scenario: a route at one concurrency, with the CPU both processes used meanwhile. */
export interface ScenarioRow {
  /** `quote` or `trivial`. */
  scenario: string;
  /** What was requested, e.g. `POST /quote/v2`. */
  endpoint: string;
  result: LoadResult;
  /** The server's CPU over the measuring window (not the warm-up), in cores; null when it cannot be read. */
  serverCores: number | null;
  clientCores: number;
  /** The server's CPU over the window by kind of thread, in cores (`bench/quote.ts` only). */
  serverThreads?: ThreadCpu | null;
  /** The server's CPU over warm-up and window together, in cores: how the bench measured it before. */
  serverCoresWithWarmup?: number | null;
  /** RPC requests the gateway made to the chains over warm-up and window (`/metrics`); null when unread. */
  rpcRequests?: number | null;
  /** Seconds the run took, warm-up included. */
  seconds?: number;
}

export interface Summary {
  scenario: string;
  concurrency: number;
  requests: number;
  errors: number;
  /** Successful (200) responses per second: failures are not throughput. */
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

export function summarize(row: ScenarioRow): Summary {
  const { result } = row;
  return {
    scenario: row.scenario,
    concurrency: result.concurrency,
    requests: result.requests,
    errors: countOf(result.errors),
    perSecond: result.latenciesMs.length / result.windowSeconds,
    p50Ms: percentile(result.latenciesMs, 0.5),
    p99Ms: percentile(result.latenciesMs, 0.99),
  };
}

export const countOf = (errors: Map<string, ErrorTally>) => [...errors.values()].reduce((sum, e) => sum + e.count, 0);

/** One line per finished scenario while the run goes on (the full tables come at the end). */
export const progressLine = (s: Summary) =>
  `  ${s.scenario} at ${s.concurrency} clients: ${fixed(s.perSecond, 0)} req/s, p50 ${fixed(s.p50Ms, 2)} ms, p99 ${fixed(s.p99Ms, 2)} ms, ${s.errors} errors`;

/** A number with `digits` decimals, or an em dash when it is not finite (no sample). */
export const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : '—');
const cores = (value: number | null) => (value === null ? 'n/a' : `${Math.round(value * 100)}%`);

/** Route, concurrency, requests, errors, req/s, p50, p99 and the CPU of both processes, one row per scenario. */
export function resultsTable(rows: ScenarioRow[]): string {
  const body = rows.map((row) => {
    const s = summarize(row);
    return [
      `${s.scenario} (${row.endpoint})`,
      String(s.concurrency),
      String(s.requests),
      String(s.errors),
      fixed(s.perSecond, 0),
      fixed(s.p50Ms, 2),
      fixed(s.p99Ms, 2),
      cores(row.serverCores),
      // CPU time per answered request: steadier than req/s when the machine's speed varies between runs.
      row.serverCores === null || !(s.perSecond > 0) ? 'n/a' : fixed((row.serverCores * 1000) / s.perSecond, 3),
      cores(row.clientCores),
    ];
  });
  return formatTable(
    [
      'route',
      'clients',
      'requests',
      'errors',
      'req/s',
      'p50 ms',
      'p99 ms',
      'server CPU',
      'server ms/req',
      'client CPU',
    ],
    body,
  );
}

/**
 * The server's CPU per answered request over the window, split by thread (main, worker threads, V8's helpers,
 * the rest), beside the whole process's per request over warm-up and window together (the first scenario's
 * warm-up holds the gateway's first JIT compiles).
 */
export function threadTable(rows: ScenarioRow[]): string {
  const body = rows.map((row) => {
    const s = summarize(row);
    const perRequest = (value: number | null | undefined) =>
      value == null || !(s.perSecond > 0) ? 'n/a' : fixed((value * 1000) / s.perSecond, 3);
    const threads = row.serverThreads;
    return [
      `${s.scenario} (${row.endpoint})`,
      String(s.concurrency),
      perRequest(threads?.main),
      perRequest(threads?.worker),
      perRequest(threads?.v8),
      perRequest(threads?.other),
      perRequest(row.serverCores),
      perRequest(row.serverCoresWithWarmup),
    ];
  });
  return formatTable(['route', 'clients', 'main', 'worker', 'V8 helpers', 'other', 'process', 'with warm-up'], body);
}

/** Per concurrency: quote over trivial, for throughput and for p99 (what the quote costs over bare HTTP). */
export function ratioTable(quote: Summary[], trivial: Summary[]): string {
  const body = quote.map((q) => {
    const t = trivial.find((candidate) => candidate.concurrency === q.concurrency);
    return [
      String(q.concurrency),
      fixed(q.perSecond, 0),
      fixed(t?.perSecond ?? Number.NaN, 0),
      fixed(q.perSecond / (t?.perSecond ?? Number.NaN), 3),
      fixed(q.p99Ms, 2),
      fixed(t?.p99Ms ?? Number.NaN, 2),
      fixed(q.p99Ms / (t?.p99Ms ?? Number.NaN), 2),
    ];
  });
  return formatTable(
    ['clients', 'quote req/s', 'trivial req/s', 'req/s ratio', 'quote p99', 'trivial p99', 'p99 ratio'],
    body,
  );
}

/** Every failure kind of every scenario, with the first body of each: the reader must see why it failed. */
export function errorReport(rows: ScenarioRow[]): string[] {
  const lines: string[] = [];
  for (const row of rows) {
    const label = `${row.scenario} (${row.endpoint}) at ${row.result.concurrency} clients`;
    for (const [phase, errors] of [
      ['measured', row.result.errors],
      ['warm-up', row.result.warmupErrors],
    ] as const) {
      for (const [kind, tally] of errors) {
        lines.push(`  ${label}, ${phase}: ${tally.count} × ${kind}; first: ${tally.first || '(empty body)'}`);
      }
    }
  }
  return lines;
}

/** Left-aligned first column, right-aligned numbers, a rule under the header. */
export function formatTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0)))
      .join('  ');
  return [line(headers), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}
