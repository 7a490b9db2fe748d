/**
 * Judges what the observers of `npm run bench:stream` recorded: latencies from each status change to its
 * receipt (per channel and per status), the completeness checks (every change, once, in order, everywhere),
 * the connection times and the memory per connection, as plain-text tables in the style of `report.ts`.
 */
import { percentile } from './load.js';
import { fixed, formatTable } from './report.js';
import type { BenchServerMemory } from './serverProcess.js';
import type { Protocol, Receipt, Subscriber, WebhookReceipt } from './streamClients.js';

export const TARGET = {
  /** Status change → every subscriber, p99 (target: under 25 ms on both protocols). */
  subscriberP99Ms: 25,
  /** Status change → first webhook attempt at the receiver, p99 (the issue says "under 100 ms"; judged at p99). */
  webhookP99Ms: 100,
};

/** The changes a native-ETH bridge goes through after `waiting`, in order (no event is written for `waiting`). */
export const EXPECTED_CHANGES = ['pending', 'submitted', 'success'] as const;
const INITIAL_STATUS = 'waiting';

export const PROTOCOLS: Protocol[] = ['graphql-ws', '/ws'];
export const WEBHOOK = 'webhook, first attempt';
type Channel = Protocol | typeof WEBHOOK;

/** Latencies of one channel (and optionally one status): ms, ascending, and the expected samples not received. */
export interface LatencyRow {
  channel: Channel;
  status: string | null;
  values: Float64Array;
  missing: number;
  target: number;
}

/** Everything the checks found wrong, by kind, with the first few details of each kind. */
export class Problems {
  readonly kinds = new Map<string, { count: number; examples: string[] }>();
  add(kind: string, detail: string): void {
    const entry = this.kinds.get(kind) ?? { count: 0, examples: [] };
    entry.count++;
    if (entry.examples.length < 3) entry.examples.push(detail);
    this.kinds.set(kind, entry);
  }
  get count(): number {
    return [...this.kinds.values()].reduce((sum, entry) => sum + entry.count, 0);
  }
  lines(): string[] {
    return [...this.kinds].flatMap(([kind, { count, examples }]) => [
      `  ${count} × ${kind}`,
      ...examples.map((example) => `      e.g. ${example}`),
    ]);
  }
}

/** The first attempt of each (request, status) and what else the receiver got. */
export interface WebhookSummary {
  /** requestId → status → first receipt. */
  first: Map<string, Map<string, WebhookReceipt>>;
  /** POSTs of a (request, status) already received: later attempts. The receiver answers 200, so normally 0. */
  repeats: number;
  /** Requests whose first attempts arrived in another order than their statuses changed. */
  outOfOrder: number;
}

const shortId = (requestId: string) => `${requestId.slice(0, 10)}…`;

export function summarizeWebhooks(received: WebhookReceipt[]): WebhookSummary {
  const first = new Map<string, Map<string, WebhookReceipt>>();
  let repeats = 0;
  for (const receipt of received) {
    const byStatus = first.get(receipt.requestId) ?? new Map<string, WebhookReceipt>();
    first.set(receipt.requestId, byStatus);
    if (byStatus.has(receipt.status)) repeats++;
    else byStatus.set(receipt.status, receipt);
  }
  let outOfOrder = 0;
  for (const byStatus of first.values()) {
    const arrival = [...byStatus.values()].sort((a, b) => a.receivedAt - b.receivedAt).map((r) => r.status);
    const changeOrder = [...byStatus.values()].sort((a, b) => a.updatedAt - b.updatedAt).map((r) => r.status);
    if (arrival.join() !== changeOrder.join()) outOfOrder++;
  }
  return { first, repeats, outOfOrder };
}

/**
 * Every subscriber must have started at `waiting` and then received exactly the expected changes, each once,
 * in order, with the same `updatedAt` as the webhook of that change (one outbox event feeds both); a graphql-ws
 * subscription must have completed. Every change of every request must have had a signed webhook.
 */
export function checkCompleteness(
  subscribers: Subscriber[],
  requestIds: string[],
  webhooks: WebhookSummary,
  malformedWebhooks: string[],
  problems: Problems,
): void {
  for (const subscriber of subscribers) {
    const who = `${subscriber.protocol} subscriber #${subscriber.index} of ${shortId(subscriber.requestId)}`;
    for (const text of subscriber.problems)
      problems.add(`${subscriber.protocol}: transport problem`, `${who}: ${text}`);
    if (subscriber.initial === null) {
      problems.add(`${subscriber.protocol}: subscription never confirmed`, who);
      continue;
    }
    if (subscriber.initial.status !== INITIAL_STATUS)
      problems.add(
        `${subscriber.protocol}: first message not \`${INITIAL_STATUS}\``,
        `${who}: ${subscriber.initial.status}`,
      );
    const got = subscriber.changes.map((change) => change.status);
    const expected: readonly string[] = EXPECTED_CHANGES;
    if (got.join() !== expected.join()) {
      const seen = new Set<string>();
      const duplicates = got.filter((status) => seen.has(status) || !seen.add(status));
      const missing = expected.filter((status) => !got.includes(status));
      const unexpected = got.filter((status) => !expected.includes(status));
      const detail = `${who}: got [${got.join(', ')}], expected [${expected.join(', ')}]`;
      if (missing.length > 0) problems.add(`${subscriber.protocol}: missing status change`, detail);
      if (duplicates.length > 0) problems.add(`${subscriber.protocol}: duplicated status change`, detail);
      if (unexpected.length > 0) problems.add(`${subscriber.protocol}: unexpected status`, detail);
      if (missing.length === 0 && duplicates.length === 0 && unexpected.length === 0)
        problems.add(`${subscriber.protocol}: out of order`, detail);
    }
    for (const change of subscriber.changes) {
      const webhook = webhooks.first.get(subscriber.requestId.toLowerCase())?.get(change.status);
      if (webhook !== undefined && webhook.updatedAt !== change.updatedAt) {
        problems.add(
          `${subscriber.protocol}: updatedAt differs from the webhook's`,
          `${who}, ${change.status}: ${change.updatedAt} vs ${webhook.updatedAt}`,
        );
      }
    }
    if (subscriber.completed === false && got.includes('success'))
      problems.add('graphql-ws: not completed after success', who);
  }
  for (const requestId of requestIds) {
    const byStatus = webhooks.first.get(requestId.toLowerCase());
    for (const status of EXPECTED_CHANGES) {
      const receipt = byStatus?.get(status);
      if (receipt === undefined)
        problems.add('webhook: no attempt for a status change', `${shortId(requestId)} ${status}`);
      else if (!receipt.verified) problems.add('webhook: signature does not verify', `${shortId(requestId)} ${status}`);
      else if (receipt.event !== 'request.status.updated')
        problems.add('webhook: wrong event name', `${shortId(requestId)} ${status}: ${JSON.stringify(receipt.event)}`);
    }
    for (const status of byStatus?.keys() ?? []) {
      if (!(EXPECTED_CHANGES as readonly string[]).includes(status))
        problems.add('webhook: unexpected status', `${shortId(requestId)} ${status}`);
    }
  }
  const known = new Set(requestIds.map((id) => id.toLowerCase()));
  for (const requestId of webhooks.first.keys())
    if (!known.has(requestId)) problems.add('webhook: unknown request', requestId);
  for (const body of malformedWebhooks) problems.add('webhook: malformed body', body);
}

const latency = (receipt: Receipt) => receipt.receivedAt - receipt.updatedAt;
const ascending = (values: number[]) => Float64Array.from(values).sort();

/** Per channel (status null) and per channel and status: latencies of the expected changes that arrived. */
export function latencyRows(subscribers: Subscriber[], requestIds: string[], webhooks: WebhookSummary): LatencyRow[] {
  const rows: LatencyRow[] = [];
  const statuses: Array<string | null> = [null, ...EXPECTED_CHANGES];
  for (const protocol of PROTOCOLS) {
    const mine = subscribers.filter((s) => s.protocol === protocol);
    for (const status of statuses) {
      const wanted = status === null ? EXPECTED_CHANGES : [status];
      const values: number[] = [];
      let missing = 0;
      for (const subscriber of mine) {
        for (const want of wanted) {
          // The first receipt of each status: a repeat is an error, not a second sample.
          const receipt = subscriber.changes.find((change) => change.status === want);
          if (receipt === undefined) missing++;
          else values.push(latency(receipt));
        }
      }
      rows.push({ channel: protocol, status, values: ascending(values), missing, target: TARGET.subscriberP99Ms });
    }
  }
  for (const status of statuses) {
    const wanted = status === null ? EXPECTED_CHANGES : [status];
    const values: number[] = [];
    let missing = 0;
    for (const requestId of requestIds) {
      for (const want of wanted) {
        const receipt = webhooks.first.get(requestId.toLowerCase())?.get(want);
        if (receipt === undefined) missing++;
        else values.push(latency(receipt));
      }
    }
    rows.push({ channel: WEBHOOK, status, values: ascending(values), missing, target: TARGET.webhookP99Ms });
  }
  return rows;
}

const p99Of = (row: LatencyRow) => percentile(row.values, 0.99);
const meets = (row: LatencyRow) => row.values.length > 0 && row.missing === 0 && p99Of(row) < row.target;

/** The main table: one row per channel, all statuses together, against its target. */
export function latencyTable(rows: LatencyRow[]): string {
  const body = rows
    .filter((row) => row.status === null)
    .map((row) => [
      row.channel,
      String(row.values.length),
      String(row.missing),
      fixed(percentile(row.values, 0.5), 1),
      fixed(p99Of(row), 1),
      fixed(row.values.at(-1) ?? Number.NaN, 1),
      `p99 < ${row.target}`,
      row.values.length === 0 ? 'NOT MEASURED' : meets(row) ? 'MET' : 'MISSED',
    ]);
  return formatTable(
    ['status change → receipt', 'samples', 'missing', 'p50 ms', 'p99 ms', 'max ms', 'target ms', 'verdict'],
    body,
  );
}

/** The same latencies split by status (pending is committed with the deposit's claim, success after a receipt). */
export function latencyByStatusTable(rows: LatencyRow[]): string {
  const body = rows
    .filter((row) => row.status !== null)
    .map((row) => [
      `${row.channel}: ${row.status}`,
      String(row.values.length),
      fixed(percentile(row.values, 0.5), 1),
      fixed(p99Of(row), 1),
      fixed(row.values.at(-1) ?? Number.NaN, 1),
    ]);
  return formatTable(['by status', 'samples', 'p50 ms', 'p99 ms', 'max ms'], body);
}

/** The warm-up's latencies per channel (`latencyRows` of its subscribers and webhooks): shown, not judged. */
export function warmupTable(rows: LatencyRow[]): string {
  const body = rows
    .filter((row) => row.status === null)
    .map((row) => [
      `warm-up: ${row.channel}`,
      String(row.values.length),
      String(row.missing),
      fixed(percentile(row.values, 0.5), 1),
      fixed(row.values.at(-1) ?? Number.NaN, 1),
    ]);
  return formatTable(['status change → receipt', 'samples', 'missing', 'p50 ms', 'max ms'], body);
}

/** The verdict lines: the subscriber target over both protocols, the webhook target. */
export function verdict(rows: LatencyRow[]): string[] {
  const overall = rows.filter((row) => row.status === null);
  const subscribers = overall.filter((row) => row.channel !== WEBHOOK);
  const webhook = overall.find((row) => row.channel === WEBHOOK);
  const figure = (row: LatencyRow) =>
    `${row.channel} p99 ${fixed(p99Of(row), 1)} ms${row.missing > 0 ? ` (${row.missing} missing)` : ''}`;
  const judged = (measured: LatencyRow[]) =>
    measured.some((row) => row.values.length === 0) ? 'NOT MEASURED' : measured.every(meets) ? 'MET' : 'MISSED';
  return [
    'Verdict',
    `  status change → every subscriber, p99 < ${TARGET.subscriberP99Ms} ms on both protocols: ${subscribers.map(figure).join(', ')} → ${judged(subscribers)}`,
    webhook === undefined
      ? '  first webhook attempt: NOT MEASURED'
      : `  status change → first webhook attempt, p99 < ${TARGET.webhookP99Ms} ms: ${figure(webhook)}, max ${fixed(webhook.values.at(-1) ?? Number.NaN, 1)} ms → ${judged([webhook])}`,
  ];
}

/** Connect + subscribe (socket start → first status) per protocol. */
export function connectTable(subscribers: Subscriber[], wallSeconds: Map<Protocol, number>): string {
  const body = PROTOCOLS.map((protocol) => {
    const mine = subscribers.filter((s) => s.protocol === protocol);
    const times = ascending(mine.flatMap((s) => (s.confirmedAt === null ? [] : [s.confirmedAt - s.startedAt])));
    const wall = wallSeconds.get(protocol) ?? Number.NaN;
    return [
      protocol,
      String(mine.length),
      String(mine.length - times.length),
      fixed(percentile(times, 0.5), 1),
      fixed(percentile(times, 0.99), 1),
      fixed(times.at(-1) ?? Number.NaN, 1),
      fixed(wall, 2),
      fixed(times.length / wall, 0),
    ];
  });
  return formatTable(
    ['connect + subscribe', 'opened', 'failed', 'p50 ms', 'p99 ms', 'max ms', 'all in s', 'per s'],
    body,
  );
}

/** One memory reading of the gateway, and how many connections of each protocol were open then. */
export interface MemoryStep {
  label: string;
  memory: BenchServerMemory;
  /** Connections added since the previous step (0 for the baseline). */
  added: number;
}

const MiB = 2 ** 20;
const KiB = 2 ** 10;

/** RSS and V8 heap at each step, the difference to the previous step, and that difference per added connection. */
export function memoryTable(steps: MemoryStep[]): string {
  const body = steps.map((step, index) => {
    const previous = steps[index - 1];
    const delta = (field: 'rss' | 'heapUsed') =>
      previous === undefined ? Number.NaN : step.memory[field] - previous.memory[field];
    const perConnection = (field: 'rss' | 'heapUsed') =>
      step.added === 0 ? Number.NaN : delta(field) / step.added / KiB;
    return [
      step.label,
      fixed(step.memory.rss / MiB, 1),
      fixed(step.memory.heapUsed / MiB, 1),
      fixed(delta('rss') / MiB, 1),
      fixed(delta('heapUsed') / MiB, 1),
      fixed(perConnection('rss'), 1),
      fixed(perConnection('heapUsed'), 1),
    ];
  });
  return formatTable(
    ['gateway memory', 'RSS MiB', 'heap MiB', 'Δ RSS MiB', 'Δ heap MiB', 'RSS KiB/conn', 'heap KiB/conn'],
    body,
  );
}

/** The totals over all connections: (last − first) / connections, in KiB. */
export function memoryPerConnection(steps: MemoryStep[]): { rssKiB: number; heapKiB: number; connections: number } {
  const first = steps[0];
  const last = steps.at(-1);
  const connections = steps.reduce((sum, step) => sum + step.added, 0);
  if (first === undefined || last === undefined || connections === 0)
    return { rssKiB: Number.NaN, heapKiB: Number.NaN, connections };
  return {
    rssKiB: (last.memory.rss - first.memory.rss) / connections / KiB,
    heapKiB: (last.memory.heapUsed - first.memory.heapUsed) / connections / KiB,
    connections,
  };
}

/** When a change was seen committed (PostgreSQL only, `streamCommits.ts`). */
export type CommitClock = (requestId: string, status: string) => number | undefined;

/**
 * PostgreSQL only: the same receipts measured from "commit seen" (an upper bound of the commit, so these
 * understate), and `updatedAt` → commit seen: how much of the main figures is the status change's own
 * transaction (after its stamp) plus the notification, rather than delivery.
 */
export function commitSeenTable(
  subscribers: Subscriber[],
  requestIds: string[],
  webhooks: WebhookSummary,
  commitSeen: CommitClock,
): string {
  type Measure = (receipt: Receipt, seenAt: number) => number;
  const fromCommit: Measure = (receipt, seenAt) => receipt.receivedAt - seenAt;
  const row = (name: string, pairs: Array<[string, Receipt | undefined]>, measure: Measure = fromCommit): string[] => {
    const values: number[] = [];
    let missing = 0;
    for (const [requestId, receipt] of pairs) {
      const seenAt = receipt === undefined ? undefined : commitSeen(requestId, receipt.status);
      if (receipt === undefined || seenAt === undefined) missing++;
      else values.push(measure(receipt, seenAt));
    }
    const sorted = ascending(values);
    return [
      name,
      String(sorted.length),
      String(missing),
      fixed(percentile(sorted, 0.5), 1),
      fixed(percentile(sorted, 0.99), 1),
      fixed(sorted.at(-1) ?? Number.NaN, 1),
    ];
  };
  const subscriberPairs = (protocol: Protocol): Array<[string, Receipt | undefined]> =>
    subscribers
      .filter((s) => s.protocol === protocol)
      .flatMap((s) =>
        EXPECTED_CHANGES.map((status): [string, Receipt | undefined] => [
          s.requestId,
          s.changes.find((c) => c.status === status),
        ]),
      );
  const webhookPairsOf = (statuses: readonly string[]) =>
    requestIds.flatMap((id) =>
      statuses.map((status): [string, Receipt | undefined] => [id, webhooks.first.get(id.toLowerCase())?.get(status)]),
    );
  const body = [
    ...[null, ...EXPECTED_CHANGES].map((status) =>
      row(
        `updatedAt → commit seen${status === null ? '' : `: ${status}`}`,
        webhookPairsOf(status === null ? EXPECTED_CHANGES : [status]),
        (receipt, seenAt) => seenAt - receipt.updatedAt,
      ),
    ),
    ...PROTOCOLS.map((protocol) => row(`commit seen → ${protocol}`, subscriberPairs(protocol))),
    row(`commit seen → ${WEBHOOK}`, webhookPairsOf(EXPECTED_CHANGES)),
  ];
  return formatTable(['PostgreSQL commit clock', 'samples', 'missing', 'p50 ms', 'p99 ms', 'max ms'], body);
}

/**
 * Where the time goes, from what is on the wire: the `/ws` event's `publishedAt` (the gateway's clock when it
 * sent the frame) splits its latency into the gateway's side and the socket plus this process; and for each
 * change, the first and the last of all its subscribers (both protocols) show the fan-out's spread.
 */
export function breakdownTable(subscribers: Subscriber[]): string {
  const stats = (name: string, values: number[]): string[] => {
    const sorted = ascending(values);
    return [
      name,
      String(sorted.length),
      fixed(percentile(sorted, 0.5), 1),
      fixed(percentile(sorted, 0.99), 1),
      fixed(sorted.at(-1) ?? Number.NaN, 1),
    ];
  };
  const ws = subscribers
    .filter((s) => s.protocol === '/ws')
    .flatMap((s) => s.changes.filter((c) => c.publishedAt !== undefined));
  const byChange = new Map<string, number[]>();
  for (const subscriber of subscribers) {
    for (const change of subscriber.changes) {
      const key = `${subscriber.requestId} ${change.status}`;
      const list = byChange.get(key) ?? [];
      list.push(latency(change));
      byChange.set(key, list);
    }
  }
  const firsts = [...byChange.values()].map((list) => Math.min(...list));
  const lasts = [...byChange.values()].map((list) => Math.max(...list));
  const spreads = [...byChange.values()].map((list) => Math.max(...list) - Math.min(...list));
  const body = [
    stats(
      '/ws: updatedAt → publishedAt (gateway: rest of the transaction, bus, fan-out)',
      ws.map((c) => c.publishedAt! - c.updatedAt),
    ),
    stats(
      '/ws: publishedAt → receipt (socket, this process)',
      ws.map((c) => c.receivedAt - c.publishedAt!),
    ),
    stats('per change, first subscriber (either protocol)', firsts),
    stats('per change, last subscriber', lasts),
    stats('per change, last − first (fan-out spread)', spreads),
  ];
  return formatTable(['where the time goes', 'samples', 'p50 ms', 'p99 ms', 'max ms'], body);
}
