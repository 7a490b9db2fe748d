/**
 * Closed-loop HTTP load: N clients, each sending its next request as soon as the previous response has been
 * read in full, over keep-alive connections (one per client). Only responses that complete inside the
 * measuring window count, so the warm-up and the requests still in flight at the end do not skew the figures.
 */
import http from 'node:http';

/** One request to send; `body` is JSON text. */
export interface BenchRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}

/** Builds the i-th request of a scenario (so bodies can vary per request). */
export type RequestFactory = (index: number) => BenchRequest;

export interface LoadParameters {
  baseUrl: string;
  concurrency: number;
  warmupSeconds: number;
  durationSeconds: number;
  nextRequest: RequestFactory;
  /** A request still unanswered after this long counts as an error (a hung server must not hang the bench). */
  timeoutMs?: number;
  /**
   * Called when the measuring window opens and when it closes (from timers, so within a few ms of the edges):
   * where a caller samples the server's CPU, so the warm-up's work (the first JIT compiles) stays out of it.
   */
  onWindow?: (edge: 'start' | 'end') => void;
}

/** Failures of one kind: an HTTP status or a network error code. */
export interface ErrorTally {
  count: number;
  /** Body (or message) of the first failure of this kind, truncated. */
  first: string;
}

export interface LoadResult {
  concurrency: number;
  /** Responses completed inside the window, failures included. */
  requests: number;
  /** Latencies of the 200 responses inside the window, milliseconds, ascending. */
  latenciesMs: Float64Array;
  /** Failures inside the window, by kind (`HTTP 501`, `network ECONNRESET`, ...). */
  errors: Map<string, ErrorTally>;
  /** Failures during the warm-up, by kind: not in the figures, but still a broken benchmark. */
  warmupErrors: Map<string, ErrorTally>;
  windowSeconds: number;
}

export interface Outcome {
  /** null on success (HTTP 200). */
  errorKind: string | null;
  detail: string;
}

const ERROR_DETAIL_CHARS = 500;
const NS_PER_MS = 1_000_000;

/** Runs one scenario at one concurrency: warm-up, then the measuring window. */
export async function runLoad(parameters: LoadParameters): Promise<LoadResult> {
  const {
    baseUrl,
    concurrency,
    warmupSeconds,
    durationSeconds,
    nextRequest,
    timeoutMs = 10_000,
    onWindow,
  } = parameters;
  const url = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies: number[] = [];
  const errors = new Map<string, ErrorTally>();
  const warmupErrors = new Map<string, ErrorTally>();
  let requests = 0;
  let index = 0;

  const start = process.hrtime.bigint();
  const windowStart = start + BigInt(Math.round(warmupSeconds * 1e9));
  const windowEnd = windowStart + BigInt(Math.round(durationSeconds * 1e9));

  const client = async () => {
    while (process.hrtime.bigint() < windowEnd) {
      const request = nextRequest(index++);
      const sentAt = process.hrtime.bigint();
      const outcome = await send(agent, url, request, timeoutMs);
      const doneAt = process.hrtime.bigint();
      if (doneAt < windowStart) {
        if (outcome.errorKind) tally(warmupErrors, outcome.errorKind, outcome.detail);
        continue;
      }
      if (doneAt > windowEnd) break;
      requests++;
      if (outcome.errorKind) tally(errors, outcome.errorKind, outcome.detail);
      else latencies.push(Number(doneAt - sentAt) / NS_PER_MS);
    }
  };

  // Timers, so the edges are within a few ms of the window's; the clients all stop after its end, so the
  // wait for the end edge below is at most that long.
  const windowEdges =
    onWindow === undefined
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          setTimeout(() => onWindow('start'), warmupSeconds * 1000);
          setTimeout(
            () => {
              onWindow('end');
              resolve();
            },
            (warmupSeconds + durationSeconds) * 1000,
          );
        });
  try {
    await Promise.all(Array.from({ length: concurrency }, client));
  } finally {
    agent.destroy();
  }
  await windowEdges;
  return {
    concurrency,
    requests,
    latenciesMs: Float64Array.from(latencies).sort(),
    errors,
    warmupErrors,
    windowSeconds: durationSeconds,
  };
}

function tally(errors: Map<string, ErrorTally>, kind: string, detail: string): void {
  const existing = errors.get(kind);
  if (existing) existing.count++;
  else errors.set(kind, { count: 1, first: detail.slice(0, ERROR_DETAIL_CHARS) });
}

/**
 * Sends one request and reads the whole response: a latency includes the body transfer. Never rejects;
 * non-200 statuses and network failures come back as an `errorKind`, with the body kept only for those.
 */
export function send(agent: http.Agent, base: URL, request: BenchRequest, timeoutMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const headers: http.OutgoingHttpHeaders = {};
    if (request.body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(request.body);
    }
    const req = http.request(
      { agent, hostname: base.hostname, port: base.port, path: request.path, method: request.method, headers },
      (res) => {
        const failed = res.statusCode !== 200;
        const chunks: Buffer[] = [];
        if (failed) res.on('data', (chunk: Buffer) => chunks.push(chunk));
        else res.resume();
        res.on('end', () =>
          resolve(
            failed
              ? { errorKind: `HTTP ${res.statusCode}`, detail: Buffer.concat(chunks).toString('utf8') }
              : { errorKind: null, detail: '' },
          ),
        );
        res.on('error', (error) => resolve(networkFailure(error)));
      },
    );
    req.setTimeout(timeoutMs, () =>
      req.destroy(Object.assign(new Error(`no response within ${timeoutMs} ms`), { code: 'TIMEOUT' })),
    );
    req.on('error', (error) => resolve(networkFailure(error)));
    req.end(request.body);
  });
}

function networkFailure(error: Error & { code?: string }): Outcome {
  return { errorKind: `network ${error.code ?? error.name}`, detail: error.message };
}

/** Nearest-rank percentile of an ascending array; NaN when empty. */
export function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil(fraction * sorted.length));
  return sorted[rank - 1] ?? Number.NaN;
}
