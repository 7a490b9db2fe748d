/** Turns the traces of `npm run bench:fill` into its interval table, its verdict and its list of failures. */
import type { FillTrace } from './fillRequest.js';
import { percentile } from './load.js';
import { fixed, formatTable } from './report.js';

export const TARGET = {
  /** Deposit observed (claimed: `pending`) within this long (p50) of its block being mined. */
  minedToObservedP50Ms: 50,
  /** Fill broadcast within this long (p50) of the deposit being observed, fill-time re-pricing included. */
  observedToBroadcastP50Ms: 40,
  /** Deposit sent to `success` under this long (p50), with 1 s blocks. */
  sentToSuccessP50Ms: 1_300,
  /** (Deposit sent → success seen) − the floor of the two block waits, p50. */
  overheadP50Ms: 150,
};

/**
 * The least time from the deposit's block to the fill's broadcast that the targets allow the gateway (seeing the
 * deposit, then deciding and sending the fill): a destination block that arrives sooner after the deposit's block
 * cannot hold the fill, so the floor is the first destination block at least this long after the deposit's block.
 * (A floor of "the next destination block" would count a block a few ms after the deposit's as reachable.)
 */
export const REACTION_MS = TARGET.minedToObservedP50Ms + TARGET.observedToBroadcastP50Ms;

/** The part of the time we own: deposit sent → success seen, less the floor of the two block waits. */
export const OVERHEAD = 'overhead: (sent → success seen) − floor';

/** One measured interval over the successful requests; `values` are ms, ascending. */
export interface Interval {
  name: string;
  /** Which clocks its ends come from. */
  clock: string;
  values: Float64Array;
  /** Successful requests for which an end was not observed (a status the poll skipped). */
  missing: number;
}

type Extract = (trace: FillTrace) => number | undefined;

/** The intervals, in the order a request goes through them. */
export function intervals(traces: FillTrace[]): Interval[] {
  const ok = traces.filter((trace) => trace.failure === null);
  const at = (status: string) => (trace: FillTrace) => trace.statuses.get(status);
  const pending = at('pending');
  const submitted = at('submitted');
  const success = at('success');
  const minus = (a: number | undefined | null, b: number | undefined | null) =>
    a == null || b == null ? undefined : a - b;
  const interval = (name: string, clock: string, extract: Extract): Interval => {
    const values = ok.map(extract);
    const present = values.filter((value): value is number => value !== undefined);
    return { name, clock, values: Float64Array.from(present).sort(), missing: values.length - present.length };
  };
  return [
    interval('deposit sent → deposit mined', 'client', (t) => minus(t.minedAt, t.sentAt)),
    interval('deposit mined → observed (pending)', 'server − client wall', (t) =>
      minus(pending(t)?.updatedAt, t.minedWallAt),
    ),
    interval('observed (pending) → fill broadcast (submitted)', 'server', (t) =>
      minus(submitted(t)?.updatedAt, pending(t)?.updatedAt),
    ),
    interval('deposit mined → fill broadcast', 'server − client wall', (t) =>
      minus(submitted(t)?.updatedAt, t.minedWallAt),
    ),
    interval('deposit mined → submitted seen', 'client', (t) => minus(submitted(t)?.seenAt, t.minedAt)),
    interval('submitted seen → success seen', 'client', (t) => minus(success(t)?.seenAt, submitted(t)?.seenAt)),
    interval('deposit sent → success seen', 'client', (t) => minus(success(t)?.seenAt, t.sentAt)),
    interval('next destination block after the deposit block − deposit block', 'client (heads)', (t) =>
      minus(t.blocks?.nextDestinationAt, t.blocks?.originAt),
    ),
    interval('sent → next destination block after the deposit block', 'client (heads)', (t) =>
      minus(t.blocks?.nextDestinationAt, t.sentAt),
    ),
    interval(
      `floor: sent → first destination block ≥ ${REACTION_MS} ms after the deposit block`,
      'client (heads)',
      (t) => minus(t.blocks?.firstDestinationAt, t.sentAt),
    ),
    interval('fill block arrived − floor (destination blocks late × block time)', 'client (heads)', (t) =>
      minus(t.blocks?.fillAt, t.blocks?.firstDestinationAt),
    ),
    interval(OVERHEAD, 'client (heads)', (t) =>
      minus(minus(success(t)?.seenAt, t.sentAt), minus(t.blocks?.firstDestinationAt, t.sentAt)),
    ),
  ];
}

/** One row per interval: n, how many were missing, p50, p99, max, and p50 in block times. */
export function intervalTable(rows: Interval[], blockTimeMs: number | null): string {
  const body = rows.map((row) => [
    row.name,
    row.clock,
    String(row.values.length),
    String(row.missing),
    fixed(percentile(row.values, 0.5), 1),
    fixed(percentile(row.values, 0.99), 1),
    fixed(row.values.at(-1) ?? Number.NaN, 1),
    blockTimeMs === null ? '—' : fixed(percentile(row.values, 0.5) / blockTimeMs, 2),
  ]);
  return formatTable(['interval', 'clock', 'n', 'missing', 'p50 ms', 'p99 ms', 'max ms', 'p50 / block'], body);
}

/** The two targets, each met, missed or not measured; returns the lines to print. */
export function verdict(rows: Interval[], blockTimeMs: number | null): string[] {
  const p50 = (name: string) => {
    const row = rows.find((candidate) => candidate.name === name);
    return row === undefined ? Number.NaN : percentile(row.values, 0.5);
  };
  const line = (label: string, value: number, limit: number, note = '') =>
    Number.isNaN(value)
      ? `  ${label}: NOT MEASURED (no sample)${note}`
      : `  ${label}: p50 ${fixed(value, 1)} ms ${value < limit ? '<' : '≥'} ${limit} ms → ${value < limit ? 'MET' : 'MISSED'}${note}`;
  const blocks =
    blockTimeMs === null
      ? ' (automine: the target assumes 1 s blocks)'
      : blockTimeMs === 1_000
        ? ''
        : ` (blocks are ${blockTimeMs} ms, the target assumes 1 s)`;
  return [
    'Verdict',
    line(
      `deposit observed within ${TARGET.minedToObservedP50Ms} ms of its block`,
      p50('deposit mined → observed (pending)'),
      TARGET.minedToObservedP50Ms,
    ),
    line(
      `fill broadcast within ${TARGET.observedToBroadcastP50Ms} ms of the deposit being observed`,
      p50('observed (pending) → fill broadcast (submitted)'),
      TARGET.observedToBroadcastP50Ms,
    ),
    line(
      `deposit sent → success under ${TARGET.sentToSuccessP50Ms} ms`,
      p50('deposit sent → success seen'),
      TARGET.sentToSuccessP50Ms,
      blocks,
    ),
    line(`overhead over the block floor under ${TARGET.overheadP50Ms} ms`, p50(OVERHEAD), TARGET.overheadP50Ms, blocks),
  ];
}

/** Failed and timed-out requests by kind, with the first detail of each kind. */
export function failureReport(traces: FillTrace[]): string[] {
  const kinds = new Map<string, { count: number; first: FillTrace }>();
  for (const trace of traces) {
    if (trace.failure === null) continue;
    const entry = kinds.get(trace.failure.kind);
    if (entry) entry.count++;
    else kinds.set(trace.failure.kind, { count: 1, first: trace });
  }
  return [...kinds].map(
    ([kind, { count, first }]) =>
      `  ${count} × ${kind}; first: request #${first.index} ${first.requestId ?? '(no request id)'}: ${first.failure?.detail ?? ''}`,
  );
}
