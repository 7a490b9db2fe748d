import { spawn } from 'node:child_process';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { PGlite as KyselyPGlite, PGliteQueryOptions, PGliteQueryResults, PGliteTransaction } from 'kysely';

/**
 * PGlite running in a worker thread, behind the subset of PGlite's API that kysely's `PGliteDialect` uses
 * (`query`, `transaction`, `close`, `closed`, `ready`, `waitReady`). The WASM database then uses the second
 * core while the main thread serves HTTP.
 *
 * Protocol (`pgliteWorker.mjs`): the main thread posts `{ id, op, ... }` with `op` one of `query` (`sql`,
 * `params`, `options`, `tx`: run inside the open transaction), `begin`, `commit`, `rollback`, `close`; the worker
 * answers `{ id, ok: true, result }` or `{ id, ok: false, error }`, and `{ id: 0 }` once PGlite is ready (or failed
 * to start). Rows and parameters cross by structured clone, which keeps bigint, Date, Uint8Array and parsed
 * jsonb. Database errors cross as their fields and are rebuilt here as Errors with the same `code`, `detail`,
 * `constraint`, `table`, `schema`, `severity`, ... plus `query` and `params`, as PGlite's DatabaseError has.
 *
 * Like PGlite, it has one connection: a transaction is exclusive (queries issued meanwhile on the proxy wait
 * for it to end), and a query on the proxy from inside `transaction(fn)` waits for `fn` and so deadlocks: use
 * the `tx` object there (kysely does).
 */
export interface PGliteProxy extends KyselyPGlite {
  /** The worker's thread id (diagnostics and tests). */
  readonly threadId: number;
  /**
   * LISTEN on `channel`: `onNotification` gets the payload of every `pg_notify` on it, at the commit that sends
   * it (PGlite has one session, so these are this process's own commits). Resolves once listening; returns
   * a function that stops calling `onNotification`.
   */
  listen(channel: string, onNotification: (payload: string) => void): Promise<() => void>;
  /**
   * How long the database has had nothing to do, in ms: 0 while a request is sent and not answered, else the time
   * since the last answer (or since the start). Work that holds every statement (`VACUUM`, `ANALYZE`) waits for it.
   */
  quietForMs(): number;
}

/** One checkpoint of the worker: how long it held the database, why it ran, and the WAL it covered. */
export interface PGliteCheckpoint {
  ms: number;
  /** `wal`: half of `max_wal_size` written since the last one; `time`: `checkpoint_timeout` passed with writes. */
  reason: 'wal' | 'time';
  /** WAL bytes written since the previous checkpoint's redo point. */
  walBytes: number;
}

export interface CreatePGliteProxyOptions {
  /** Keep the data in this directory. Without it, PGlite runs in memory. */
  dataDir?: string;
  /**
   * The worker script; default `pgliteWorker.mjs` beside this file. Tests pass a stand-in that misbehaves; with
   * one, a new data directory is not initialized first in a process of its own (`initializeDataDir`).
   */
  workerScript?: URL;
  /**
   * The worker's checkpoints (see `startCheckpointer` in the worker): how often it checks, and the WAL volume
   * and age that trigger one. Defaults: every 5 s, half of `max_wal_size`, `checkpoint_timeout`. Tests shorten them.
   */
  checkpoint?: { pollMs?: number; walBytes?: number; intervalMs?: number };
  /** Called after each of the worker's checkpoints (for the server's log: they hold every statement meanwhile). */
  onCheckpoint?: (checkpoint: PGliteCheckpoint) => void;
  /**
   * PostgreSQL's `shared_buffers` (a size such as `64MB`); default 16 MB, kept small because the pool lives in the
   * worker's WASM heap (see `pgliteWorker.mjs`). A database larger than the pool reads and writes its index pages
   * through the filesystem on every insert.
   */
  sharedBuffers?: string;
}

/** Thrown (as a rejection) when the proxy is closed, or when the worker thread failed or exited. */
export class PGliteWorkerError extends Error {
  override readonly name = 'PGliteWorkerError';
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** For database errors, which carry the query as PGlite's do. */
  sql?: string;
  params?: unknown[];
}

interface SerializedError {
  message: string;
  name?: string;
  stack?: string;
  props: Record<string, unknown>;
  hadQuery?: boolean;
}

type Reply =
  | { id: number; ok: true; result?: unknown }
  | { id: number; ok: false; error: SerializedError }
  /** A notification (id -1), not an answer. */
  | { id: -1; channel: string; payload: string }
  /** A checkpoint the worker ran (id -2), not an answer. */
  | { id: -2; checkpoint: PGliteCheckpoint };

type Request =
  | { op: 'query'; sql: string; params: unknown[]; options: PGliteQueryOptions | undefined; tx: boolean }
  | { op: 'listen'; channel: string }
  | { op: 'begin' | 'commit' | 'rollback' | 'close' };

const workerUrl = new URL('./pgliteWorker.mjs', import.meta.url);
const initializerUrl = new URL('./pgliteInitialize.mjs', import.meta.url);

/**
 * Start PGlite in a worker thread and resolve once it is ready. Rejects with PGlite's own error when it cannot
 * start (a bad `dataDir`, for instance). A new data directory is first initialized in a process of
 * its own (`initializeDataDir`).
 */
export async function createPGliteProxy(options: CreatePGliteProxyOptions = {}): Promise<PGliteProxy> {
  if (options.dataDir !== undefined && options.workerScript === undefined) await initializeDataDir(options.dataDir);
  const worker = new Worker(options.workerScript ?? workerUrl, {
    workerData: {
      options: options.dataDir === undefined ? {} : { dataDir: options.dataDir },
      checkpoint: options.checkpoint,
      sharedBuffers: options.sharedBuffers,
    },
    // Not tsx's or vitest's loaders: the worker is plain JavaScript.
    execArgv: [],
    // A small young generation. With V8's default, under quote load this thread's heap (13 MB live, a 37 MB
    // limit) had a full collection started by V8's scheduler about three times a second, and their concurrent
    // marking took a fifth of a core on the helper threads. With 12 MB the garbage of each query (parameters,
    // messages, result rows) dies in ~1 ms scavenges instead: full collections became rare (59 to 3 in 20 s).
    resourceLimits: { maxYoungGenerationSizeMb: 12 },
  });
  const pending = new Map<number, Pending>();
  /** When `pending` last became empty (`performance.now()`). */
  let idleSince = performance.now();
  let nextId = 1;
  /** Set once the proxy is closed or the worker is gone; every later request is rejected with it. */
  let failure: PGliteWorkerError | undefined;
  let closeRequested = false;
  let closing: Promise<void> | undefined;
  /** Resolved when the open transaction ends; queries issued meanwhile wait for it. */
  let transactionGate: Promise<void> | undefined;

  let started!: { resolve: () => void; reject: (error: unknown) => void };
  const ready = new Promise<void>((resolve, reject) => (started = { resolve, reject }));

  function fail(error: PGliteWorkerError): void {
    failure ??= error;
    for (const entry of pending.values()) entry.reject(failure);
    pending.clear();
    started.reject(failure);
  }

  /** Listeners by channel. */
  const listeners = new Map<string, Set<(payload: string) => void>>();

  worker.on('message', (reply: Reply) => {
    if ('checkpoint' in reply) return void options.onCheckpoint?.(reply.checkpoint);
    if ('channel' in reply) {
      for (const listener of listeners.get(reply.channel) ?? []) listener(reply.payload);
      return;
    }
    if (reply.id === 0) {
      if (reply.ok) started.resolve();
      else started.reject(rebuildError(reply.error));
      return;
    }
    const entry = pending.get(reply.id);
    if (entry === undefined) return;
    pending.delete(reply.id);
    // Idle between requests: an unused database must not keep the process alive, as in-process PGlite does not.
    if (pending.size === 0) {
      worker.unref();
      idleSince = performance.now();
    }
    if (reply.ok) entry.resolve(reply.result);
    else entry.reject(rebuildError(reply.error, entry));
  });
  worker.on('error', (error: Error) => {
    fail(new PGliteWorkerError(`The PGlite worker thread failed: ${error.message}`, { cause: error }));
  });
  worker.on('messageerror', (error) => {
    fail(new PGliteWorkerError(`A PGlite worker reply could not be read: ${error.message}`, { cause: error }));
    void worker.terminate();
  });
  worker.on('exit', (code) => {
    fail(
      closeRequested
        ? new PGliteWorkerError('PGlite is closed')
        : new PGliteWorkerError(`The PGlite worker thread exited unexpectedly (exit code ${code})`),
    );
  });

  function send(request: Request, extra?: Pick<Pending, 'sql' | 'params'>): Promise<unknown> {
    if (failure !== undefined) return Promise.reject(failure);
    if (closeRequested && request.op !== 'close') return Promise.reject(new PGliteWorkerError('PGlite is closed'));
    const id = nextId++;
    return new Promise((resolve, reject) => {
      try {
        worker.postMessage({ id, ...request });
      } catch (error) {
        // A parameter structured clone cannot copy (a function, a symbol): a DataCloneError.
        reject(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      if (pending.size === 0) worker.ref();
      pending.set(id, { resolve, reject, ...extra });
    });
  }

  function query<T>(sql: string, params: unknown[] = [], queryOptions: PGliteQueryOptions | undefined, tx: boolean) {
    let options: PGliteQueryOptions | undefined;
    try {
      options = cloneableOptions(queryOptions);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    return send({ op: 'query', sql, params, options, tx }, { sql, params }) as Promise<PGliteQueryResults<T>>;
  }

  async function waitForTransaction(): Promise<void> {
    while (transactionGate !== undefined) await transactionGate;
  }

  try {
    await ready;
  } catch (error) {
    await worker.terminate();
    throw error;
  }
  worker.unref();

  return {
    threadId: worker.threadId,
    quietForMs: () => (pending.size > 0 ? 0 : performance.now() - idleSince),
    get closed() {
      return failure !== undefined || closeRequested;
    },
    ready: true,
    waitReady: ready,

    query<T>(sql: string, params?: unknown[], queryOptions?: PGliteQueryOptions) {
      // The common case (no transaction open) posts at once, without a turn of the event loop.
      if (transactionGate === undefined) return query<T>(sql, params, queryOptions, false);
      return waitForTransaction().then(() => query<T>(sql, params, queryOptions, false));
    },

    async transaction<T>(callback: (tx: PGliteTransaction) => Promise<T>): Promise<T> {
      await waitForTransaction();
      let endGate!: () => void;
      transactionGate = new Promise<void>((resolve) => (endGate = resolve));
      try {
        await send({ op: 'begin' });
        let ended = false;
        const checkOpen = () => {
          if (ended) throw new PGliteWorkerError('Transaction is closed');
        };
        const tx: PGliteTransaction & { readonly closed: boolean } = {
          query: async <R>(sql: string, params?: unknown[], queryOptions?: PGliteQueryOptions) => {
            checkOpen();
            return await query<R>(sql, params, queryOptions, true);
          },
          rollback: async () => {
            checkOpen();
            ended = true;
            await send({ op: 'rollback' });
          },
          get closed() {
            return ended;
          },
        };
        let result: T;
        try {
          result = await callback(tx);
        } catch (error) {
          if (!ended) {
            ended = true;
            // The worker may be gone; the callback's error is the one worth reporting.
            await send({ op: 'rollback' }).catch(() => undefined);
          }
          throw error;
        }
        if (!ended) {
          ended = true;
          await send({ op: 'commit' });
        }
        return result;
      } finally {
        transactionGate = undefined;
        endGate();
      }
    },

    async listen(channel, onNotification) {
      let set = listeners.get(channel);
      if (set === undefined) {
        set = new Set();
        listeners.set(channel, set);
      }
      const listener = (payload: string) => onNotification(payload);
      set.add(listener);
      try {
        // LISTEN is a statement like any other: it waits for an open transaction to end.
        await waitForTransaction();
        await send({ op: 'listen', channel });
      } catch (error) {
        set.delete(listener);
        throw error;
      }
      return () => void set.delete(listener);
    },

    async close() {
      closeRequested = true;
      closing ??= (async () => {
        if (failure === undefined) {
          // The worker finishes what was sent before, rolls back an open transaction and closes PGlite.
          await send({ op: 'close' }).catch(() => undefined);
        }
        await worker.terminate();
      })();
      await closing;
    },
  };
}

/**
 * Creates the database in `dataDir` when there is none there yet (no `PG_VERSION`), in a child process
 * (`pgliteInitialize.mjs`). PostgreSQL's initdb in PGlite runs two more WASM instances beside the database's own
 * and copies their memory: a process that runs it peaks at about 1.1 GB, and the gateway kept about 630 MiB after
 * it (V8 had not collected those instances). In a process of its own, all of that goes back to the OS when it
 * exits, before the serving thread starts: on the devnet, the gateway's peak went from 1,301 to 847 MiB and its
 * idle RSS from 631 to 378 MiB (`npm run bench:idle`, docs/performance.md). It costs a second start of PGlite, once
 * per data directory. In memory there is no directory to hand over: PGlite creates the database in the serving
 * thread (a tar archive moved to it cost tests ~1.5 s per database and saved ~80 MiB of peak).
 */
async function initializeDataDir(dataDir: string): Promise<void> {
  if (await exists(join(dataDir, 'PG_VERSION'))) return;
  // Node itself, without this process's flags (tsx's or vitest's loaders): the script is plain JavaScript.
  const child = spawn(process.execPath, [fileURLToPath(initializerUrl), dataDir], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code === 0) return;
  const failed = /^FAILED (.*)$/m.exec(stderr);
  if (failed !== null) throw rebuildError(JSON.parse(failed[1]!) as SerializedError);
  throw new PGliteWorkerError(
    `Creating the PGlite database in ${dataDir} failed (exit code ${code}): ${stderr.trim()}`,
  );
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** Only data crosses to the worker: parsers, serializers and callbacks would run there, and cannot. */
function cloneableOptions(options: PGliteQueryOptions | undefined): PGliteQueryOptions | undefined {
  if (options === undefined) return undefined;
  const { rowMode, paramTypes, ...rest } = options;
  const unsupported = Object.keys(rest).filter((key) => rest[key as keyof typeof rest] !== undefined);
  if (unsupported.length > 0) {
    throw new PGliteWorkerError(
      `PGlite in a worker thread does not support the query options ${unsupported.join(', ')}`,
    );
  }
  return { ...(rowMode === undefined ? {} : { rowMode }), ...(paramTypes === undefined ? {} : { paramTypes }) };
}

/** An Error with the fields PGlite's DatabaseError has (`code`, `constraint`, ...) and the query, as PGlite's. */
function rebuildError(serialized: SerializedError, request?: Pending): Error {
  const error = new Error(serialized.message);
  Object.assign(error, serialized.props);
  if (serialized.name !== undefined) error.name = serialized.name;
  if (serialized.stack !== undefined) error.stack = `${serialized.stack}\n    at (PGlite worker thread)`;
  if (serialized.hadQuery && request !== undefined)
    Object.assign(error, { query: request.sql, params: request.params });
  return error;
}
