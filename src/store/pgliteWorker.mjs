// The PGlite worker thread: owns one PGlite instance and answers the main thread's requests, so the database's
// CPU (WASM PostgreSQL) runs on another core than the HTTP server. Started by `createPGliteProxy`
// (pgliteProxy.ts), which documents the protocol. Plain JavaScript on purpose: a worker is started by Node
// itself, outside tsx's and vitest's loaders, so this file must run as it is.
import { performance } from 'node:perf_hooks';
import { TextEncoder } from 'node:util';
import { parentPort, workerData } from 'node:worker_threads';
import { MemoryFS, parse, PGlite, protocol } from '@electric-sql/pglite';
import { serializeError } from './pgliteErrors.mjs';

/**
 * PostgreSQL settings on top of PGlite's own. `wal_init_zero=off`: a new 16 MB WAL segment is created by
 * extending the file instead of writing 16 MB of zeros. Under quote load the WAL fills a segment every two
 * seconds, and each zero fill stopped every query for 20–40 ms (p99.9 of `/quote/v2` at 16 clients fell from
 * 33–41 ms to 17–20 ms without it). The zeros only reserve disk space ahead of time; PGlite runs without fsync,
 * so they bought no durability here.
 *
 * `shared_buffers=16MB` (unless the proxy was given `sharedBuffers`) instead of PostgreSQL's 128 MB: the buffer pool lives in the WASM heap, so every page it
 * ever touched stays in this process's RSS. The gateway's working set is far smaller (the devnet's whole
 * database is a few MB), and a page evicted from the pool is still in the OS page cache under the data directory.
 * Measured with `npm run bench:idle` on the devnet: gateway RSS 616 → 496 MiB; at the end of `npm run bench`
 * 660–732 → 531–542 MiB, with no change in quote throughput beyond the run-to-run noise (issue #14's note).
 *
 * `plan_cache_mode=force_custom_plan`: statements run as named prepared statements (see `query`), and with
 * PostgreSQL's default a statement run five times may switch to one generic plan for all values. Forced custom
 * plans keep what the unnamed statements did before, and what the PostgreSQL path does: each execution planned
 * with its own values (a `status = $1` can still use a partial index on `status = 'waiting'`). The schema has
 * no PL/pgSQL functions, whose plans this setting would also reach. The one exception is an INSERT whose plan no
 * value can change, which the worker runs under `force_generic_plan` (see `oneGenericPlan`).
 */
const settings = [
  ...['-c', 'wal_init_zero=off'],
  // The gateway's own setting (`EVENT_NOTIFICATIONS_SETTING`): this PGlite's one session is the gateway's, so its
  // event notifications may carry the events themselves (see `notifyEvents` in requestEvents.repository.ts).
  ...['-c', 'intent_gateway.event_notifications=full'],
  ...['-c', `shared_buffers=${workerData.sharedBuffers ?? '16MB'}`],
  ...['-c', 'plan_cache_mode=force_custom_plan'],
];

/** @type {import('@electric-sql/pglite').PGlite} */
let pglite;
try {
  pglite = await PGlite.create({ ...workerData.options, startParams: [...PGlite.defaultStartParams, ...settings] });
} catch (error) {
  parentPort.postMessage({ id: 0, ok: false, error: serializeError(error) });
  // Ends the thread: the main thread is not listening for anything else.
  parentPort.close();
}

/**
 * Whether PGlite's filesystem has nothing to sync: on Node it is the in-memory one or NodeFS (a data directory,
 * written through as PostgreSQL writes), which both inherit the base filesystem's empty `syncToFs`. Then
 * `pglite.syncToFs()` after a statement only took and released PGlite's sync lock (~10 µs of this thread per
 * statement), so it is skipped. A filesystem with a real sync (IndexedDB and the like) is still synced.
 */
const fsSyncIsNoop = pglite !== undefined && pglite.fs?.syncToFs === MemoryFS.prototype.syncToFs;

/** The open transaction, if any: PGlite's transaction object and the functions that end it. */
let open;
/** Channels this PGlite LISTENs on, with the function that stops it. */
const listening = new Map();
/** Requests being executed, so `close` can let them finish first. */
const inFlight = new Set();
/** What `end(false)` rejects the transaction's callback with, so PGlite rolls back. */
const rolledBack = new Error('rolled back on request');

/**
 * PGlite runs PostgreSQL in single-user mode, where nothing ever asks for a checkpoint: there is no checkpointer
 * process, and the trigger on WAL volume only fires under a postmaster. Without one, every WAL segment since
 * startup is kept, so `pg_wal` (on disk, or in memory without a `dataDir`) grew by about 8 MB a second under quote
 * load, with no end until PGlite closed. This does the checkpointer's job by PostgreSQL's own settings: a
 * checkpoint once the WAL written since the last one reaches half of `max_wal_size`, or once `checkpoint_timeout`
 * has passed with anything written. After a checkpoint PostgreSQL recycles or removes the older segments. It runs
 * between queries (PGlite has one session; an open transaction is let finish first), one check at a time.
 * A checkpoint writes the dirty shared buffers at once, so it stops queries while it runs: at 2,000 quotes a
 * second there was one a minute, taking about 180 ms; at ordinary load it is the 5-minute one, and short.
 * Tests shorten the poll and the two limits through `workerData.checkpoint`.
 */
function startCheckpointer({ pollMs = 5_000, walBytes, intervalMs } = {}) {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    const work = checkpointIfDue(walBytes, intervalMs)
      .catch((error) =>
        console.error(`PGlite worker: checkpoint failed, retried at the next poll: ${error?.message ?? error}`),
      )
      .finally(() => (running = false));
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  }, pollMs);
  timer.unref();
  return () => clearInterval(timer);
}

async function checkpointIfDue(walBytes, intervalMs) {
  const { rows } = await pglite.query(
    `select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), c.redo_lsn)::float8 as "sinceRedo",
            pg_wal_lsn_diff(pg_current_wal_insert_lsn(), c.checkpoint_lsn)::float8 as "sinceRecord",
            extract(epoch from now() - c.checkpoint_time)::float8 * 1000 as "ageMs",
            (select setting::float8 * 1048576 / 2 from pg_settings where name = 'max_wal_size') as "walLimit",
            (select setting::float8 * 1000 from pg_settings where name = 'checkpoint_timeout') as "timeLimit"
       from pg_control_checkpoint() c`,
  );
  const { sinceRedo, sinceRecord, ageMs, walLimit, timeLimit } = rows[0];
  // The checkpoint record itself follows the redo point: only WAL beyond it is new work.
  const wroteSince = sinceRecord > CHECKPOINT_RECORD_SLACK;
  const byVolume = sinceRedo >= (walBytes ?? walLimit);
  if (!byVolume && !(wroteSince && ageMs >= (intervalMs ?? timeLimit))) return;
  const started = performance.now();
  await pglite.exec('checkpoint');
  // Reported as PostgreSQL's `log_checkpoints` does (on by default): it held every statement for `ms`.
  const checkpoint = { ms: performance.now() - started, walBytes: sinceRedo, reason: byVolume ? 'wal' : 'time' };
  parentPort.postMessage({ id: -2, checkpoint });
}

/** Bytes of WAL after a checkpoint record that still count as "nothing written since" (its own record). */
const CHECKPOINT_RECORD_SLACK = 512;

const stopCheckpointer = pglite === undefined ? () => undefined : startCheckpointer(workerData.checkpoint);

if (pglite !== undefined) {
  parentPort.on('message', (request) => {
    const work = handle(request).then(
      (result) => reply({ id: request.id, ok: true, result }),
      (error) => reply({ id: request.id, ok: false, error: serializeError(error) }),
    );
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  });
  parentPort.postMessage({ id: 0, ok: true });
}

/** Post a reply; a result structured clone cannot copy becomes that request's error, not a crashed thread. */
function reply(message) {
  try {
    parentPort.postMessage(message);
  } catch (error) {
    parentPort.postMessage({ id: message.id, ok: false, error: serializeError(error) });
  }
}

async function handle(request) {
  switch (request.op) {
    case 'query': {
      const { rows, affectedRows, fields } = await query(
        request.sql,
        request.params ?? [],
        request.options,
        request.tx,
      );
      return { rows, affectedRows, fields };
    }
    case 'listen': {
      // Notifications (pg_notify, delivered at commit) arrive with the answer to whichever query committed;
      // each is posted to the main thread as it comes. One LISTEN per channel.
      if (!listening.has(request.channel)) {
        listening.set(
          request.channel,
          await pglite.listen(request.channel, (payload) =>
            parentPort.postMessage({ id: -1, channel: request.channel, payload }),
          ),
        );
      }
      return undefined;
    }
    case 'begin':
      return await begin();
    case 'commit':
      return await end(true);
    case 'rollback':
      return await end(false);
    case 'close': {
      // Everything sent before `close` is in `inFlight` (this request is not yet), and so is a checkpoint
      // under way: let them finish.
      stopCheckpointer();
      await Promise.allSettled(inFlight);
      if (open !== undefined) await end(false).catch(() => undefined);
      await pglite.close();
      return undefined;
    }
    default:
      throw new Error(`Unknown PGlite worker request ${JSON.stringify(request.op)}`);
  }
}

/**
 * Open a transaction with PGlite's own `transaction()` (BEGIN, then COMMIT or ROLLBACK, and a
 * TransactionAbortedError when COMMIT finds the transaction failed), held open until `end` is called.
 */
async function begin() {
  if (open !== undefined) throw new Error('A PGlite transaction is already open');
  let begun;
  const hasBegun = new Promise((resolve) => (begun = resolve));
  let commit;
  let rollback;
  const ended = new Promise((resolve, reject) => {
    commit = resolve;
    rollback = reject;
  });
  const current = { tx: undefined, commit, rollback, finished: undefined };
  open = current;
  current.finished = pglite.transaction(async (tx) => {
    current.tx = tx;
    begun();
    await ended;
  });
  try {
    // BEGIN itself can fail; then `finished` rejects before the callback runs.
    await Promise.race([hasBegun, current.finished]);
  } catch (error) {
    open = undefined;
    throw error;
  }
  return undefined;
}

async function end(commit) {
  const current = open;
  if (current === undefined) throw new Error('No PGlite transaction is open');
  if (commit) current.commit();
  else current.rollback(rolledBack);
  try {
    await current.finished;
  } catch (error) {
    // Rolled back: statements prepared inside it may have been analysed against a schema change it undid, and a
    // plan mode set inside it is undone.
    forgetStatements();
    planMode = undefined;
    if (error !== rolledBack) throw error;
  } finally {
    open = undefined;
  }
  return undefined;
}

/** Throws as PGlite's `tx.query` does once the transaction has ended or was never opened. */
function checkTransactionOpen() {
  if (open?.tx === undefined) throw new Error('No PGlite transaction is open');
  if (open.tx.closed) throw new Error('Transaction is closed');
}

/**
 * One statement, as PGlite's `query()` (or the open transaction's `tx.query`) runs it, in one call into
 * PostgreSQL instead of six. `query()` sends Parse, Describe (statement), Bind, Describe (portal), Execute and
 * Sync each on its own, and parses each answer, only to learn the parameter types before it serializes the
 * parameters; that fixed cost was most of the worker's CPU per statement (issue #14). Here each statement text
 * is prepared once as a named statement (`prepare`), which also gives its parameter types; the parameters are
 * serialized with PGlite's own serializers by those types, so every value reaches PostgreSQL as the same text
 * as before; then Bind, Describe, Execute and Sync go as one buffer, and the answer is read with PGlite's own
 * `parseResults` (same rows, fields and affectedRows). A prepared statement also spares PostgreSQL parsing and
 * analysing the text again; `plan_cache_mode=force_custom_plan` (see `settings`) keeps planning every execution
 * with its own values, as the unnamed statements of `query()` and of the PostgreSQL path are.
 *
 * The locking is `query()`'s: outside a transaction the statement takes PGlite's transaction lock (so it waits
 * for an open transaction to end) and its query lock, and the filesystem is synced after it; inside, only the
 * query lock, and no sync until the transaction ends. An ErrorResponse is thrown as PGlite's DatabaseError with
 * the `query`, `params` and `queryOptions` that `query()` adds. Sync is always in the buffer, so PostgreSQL
 * has skipped to it after an error and the next statement starts clean (inside a transaction, the transaction
 * is aborted, as before). Notifications in the answer reach `pglite.listen` callbacks through PGlite's
 * `execProtocolStream`, which dispatches them as `query()` does.
 */
async function query(sql, params, options, inTransaction) {
  if (inTransaction) {
    checkTransactionOpen();
    return await pglite._runExclusiveQuery(() => runStatement(sql, params, options, true));
  }
  await pglite._checkReady();
  return await pglite._runExclusiveTransaction(() =>
    pglite._runExclusiveQuery(async () => {
      const result = await runStatement(sql, params, options, false);
      if (!fsSyncIsNoop) await pglite.syncToFs();
      return result;
    }),
  );
}

const { serialize } = protocol;
/** The messages that follow every statement's Bind: they never change. */
const describeExecuteSync = concat([serialize.describe({ type: 'P' }), serialize.execute({}), serialize.sync()]);
/**
 * Command tags after which the prepared statements still hold; any other statement may change the schema. `ANALYZE`
 * changes statistics only and `VACUUM` storage only: PostgreSQL plans the statements again itself, and their
 * parameters and columns stay.
 */
const keepsStatements = new Set(['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'MERGE', 'ANALYZE', 'VACUUM']);

/**
 * The session's `plan_cache_mode` as this worker last set it: `custom` (the start setting), `generic`, or undefined
 * when a rollback may have undone a change.
 */
let planMode = 'custom';

/**
 * `SET plan_cache_mode` as Parse, Bind and Execute of the unnamed statement, sent in front of the statement that
 * needs it. To `generic` (an INSERT) without a Sync: the SET is in the INSERT's implicit transaction, so if the
 * INSERT fails the SET is undone with it, and the session is never left generic unknown to `planMode`. To `custom`
 * with its own Sync, a transaction of its own: the statement after it may be one that runs only as the first of its
 * implicit transaction (`VACUUM`); if that statement fails the session stays custom, which is always safe.
 */
const setPlanMode = {
  generic: concat([
    serialize.parse({ text: 'set plan_cache_mode = force_generic_plan' }),
    serialize.bind({}),
    serialize.execute({}),
  ]),
  custom: concat([
    serialize.parse({ text: 'set plan_cache_mode = force_custom_plan' }),
    serialize.bind({}),
    serialize.execute({}),
    serialize.sync(),
  ]),
};

/**
 * Whether a statement's one plan serves every value: an INSERT with no WHERE, JOIN, ORDER or LIMIT gives the planner
 * nothing to choose by its parameters, which only reach the rows inserted (`values (…)`, or `select … from
 * jsonb_populate_recordset($1)`). Planning such a statement again for each execution, as `force_custom_plan` does,
 * was ~12% of the worker's time per quote at 1 client (a `perf` profile: the quote's insert is one statement of
 * ~35 values); with `force_generic_plan` PostgreSQL plans it once per prepared statement (and again after a
 * schema change or an ANALYZE, by itself).
 */
const oneGenericPlan = (sql) => /^\s*insert\s+into\s/i.test(sql) && !/\b(where|join|order|limit)\b/i.test(sql);

/** A value sent as bytes (binary format). */
const isBinary = (value) => value instanceof ArrayBuffer || ArrayBuffer.isView(value);

async function runStatement(sql, params, options, inTransaction) {
  const statement = await prepare(sql, params, options);
  const { serializers } = pglite;
  // What `query()` does with the types it has just described; anything but text or bytes as its text.
  const values = params.map((param, i) => {
    if (param === null || param === undefined) return null;
    const serializeParam = serializers[statement.types[i]];
    const value = serializeParam ? serializeParam(param) : param.toString();
    return typeof value === 'string' || isBinary(value) ? value : String(value);
  });
  // Generic only outside a transaction: a transaction's statements are few. A change is a SET in the same call
  // (see `setPlanMode`), and a run of quote inserts pays it once.
  const mode = statement.generic && !inTransaction ? 'generic' : 'custom';
  const setMode = mode === planMode ? [] : [setPlanMode[mode]];
  let messages;
  try {
    messages = await exchange(
      concat([...closeForgotten(), ...setMode, bindMessage(statement.name, values), describeExecuteSync]),
      sql,
      params,
      options,
    );
  } catch (error) {
    // The switch to custom was a transaction of its own, done even though the statement failed (inside an
    // explicit transaction it lasts only if that commits: set it again).
    if (setMode.length > 0 && mode === 'custom') planMode = inTransaction ? undefined : 'custom';
    throw error;
  }
  planMode = mode;
  const results = parse.parseResults(messages, pglite.parsers, options);
  const result = results[results.length - 1];
  if (!keepsStatements.has(result.command)) forgetStatements();
  return result;
}

const textEncoder = new TextEncoder();
/** The largest Bind buffer kept between statements. */
const BIND_BUFFER_KEPT = 1024 * 1024;
let bindBuffer = new Uint8Array(64 * 1024);
let bindView = new DataView(bindBuffer.buffer);

/**
 * The Bind message of `serialize.bind({ statement, values })` for values that are null, text, or bytes: the unnamed
 * portal, each value in text format (bytes, an `ArrayBuffer` or a view, in binary format), the results in text. Written in one pass into a buffer
 * kept between statements: PGlite's writer grows a fresh buffer for each message and reaches its private fields
 * through `WeakMap`s on every integer it adds, ~8% of the worker's time per quote (a `perf` profile at 1 client).
 * A string's length is the UTF-8 that `encodeInto` wrote. The view returned is valid until the next call.
 */
function bindMessage(statementName, values) {
  let capacity = 1 + 4 + 1 + statementName.length * 3 + 1 + 2 + 2 * values.length + 2 + 2;
  for (const value of values) {
    // A UTF-16 code unit takes at most 3 bytes of UTF-8 (a surrogate pair, two units, takes 4).
    capacity += 4 + (value === null ? 0 : typeof value === 'string' ? value.length * 3 : value.byteLength);
  }
  if (bindBuffer.length < capacity && capacity <= BIND_BUFFER_KEPT) {
    bindBuffer = new Uint8Array(Math.max(capacity, bindBuffer.length * 2));
    bindView = new DataView(bindBuffer.buffer);
  }
  // A larger message (long calls in a quote) gets a buffer of its own, not kept.
  const buffer = capacity <= bindBuffer.length ? bindBuffer : new Uint8Array(capacity);
  const view = buffer === bindBuffer ? bindView : new DataView(buffer.buffer);
  let at = 5;
  buffer[at++] = 0; // the unnamed portal
  at += textEncoder.encodeInto(statementName, buffer.subarray(at)).written;
  buffer[at++] = 0;
  view.setUint16(at, values.length);
  at += 2;
  for (const value of values) {
    view.setInt16(at, value === null || typeof value === 'string' ? 0 : 1);
    at += 2;
  }
  view.setUint16(at, values.length);
  at += 2;
  for (const value of values) {
    if (value === null) {
      view.setInt32(at, -1);
      at += 4;
    } else if (typeof value === 'string') {
      const { written } = textEncoder.encodeInto(value, buffer.subarray(at + 4));
      view.setInt32(at, written);
      at += 4 + written;
    } else {
      const bytes = ArrayBuffer.isView(value)
        ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
        : new Uint8Array(value);
      view.setInt32(at, bytes.length);
      buffer.set(bytes, at + 4);
      at += 4 + bytes.length;
    }
  }
  view.setInt16(at, 0); // no result format codes: every column in text
  at += 2;
  buffer[0] = 0x42; // 'B'
  view.setInt32(1, at - 1);
  return buffer.subarray(0, at);
}

/**
 * Named statements by statement text (and the `paramTypes` given, if any): `{ name, types }`, prepared with
 * Parse + Describe + Sync the first time the text runs. What PostgreSQL inferred depends on the text and the
 * schema, so they are all forgotten after any statement other than plain DML (DDL, SET, savepoints, ...) and
 * after a rollback (which may have undone DDL), and prepared again when next used.
 *
 * Each one holds its parsed text in PostgreSQL's memory, inside the WASM heap, which never shrinks: about 26 bytes
 * per character of text (measured: the group-commit inserts of 1 to 64 rows, 430,000 characters, took 10.8 MiB).
 * So they are bounded by count and by total text, the least recently used closed first, and prepared again on
 * their next use. A statement built per count of rows or values has one text per count and would push the others
 * out: such statements pass an array (`getRequests`) or a `jsonb` document (`insertRequests` past 8 rows) instead.
 */
const statements = new Map();
const STATEMENTS_LIMIT = 256;
const STATEMENTS_TEXT_LIMIT = 128 * 1024;
let statementsText = 0;
let lastStatement = 0;
/** Names of forgotten statements, closed at the front of the next buffer sent. */
let forgotten = [];

async function prepare(sql, params, options) {
  const key = options?.paramTypes === undefined ? sql : `${options.paramTypes.join(',')}\0${sql}`;
  let statement = statements.get(key);
  if (statement !== undefined) {
    // Most recently used last.
    statements.delete(key);
    statements.set(key, statement);
    return statement;
  }
  const name = `gateway_${++lastStatement}`;
  const messages = await exchange(
    concat([
      ...closeForgotten(),
      serialize.parse({ name, text: sql, types: options?.paramTypes }),
      serialize.describe({ type: 'S', name }),
      serialize.sync(),
    ]),
    sql,
    params,
    options,
  );
  statement = { name, types: parse.parseDescribeStatementResults(messages), generic: oneGenericPlan(sql) };
  statements.set(key, statement);
  statementsText += key.length;
  for (const [oldKey, old] of statements) {
    // The new statement stays until its run, even when its text alone is over the limit.
    if (oldKey === key || (statements.size <= STATEMENTS_LIMIT && statementsText <= STATEMENTS_TEXT_LIMIT)) break;
    forgotten.push(old.name);
    statements.delete(oldKey);
    statementsText -= oldKey.length;
  }
  return statement;
}

function forgetStatements() {
  for (const { name } of statements.values()) forgotten.push(name);
  statements.clear();
  statementsText = 0;
}

/**
 * Close messages for the forgotten statements. They go first in the buffer, so no error before them can make
 * PostgreSQL skip them (it runs a Close even in an aborted transaction, and closing an unknown name is no error).
 */
function closeForgotten() {
  if (forgotten.length === 0) return [];
  const messages = forgotten.map((name) => serialize.close({ type: 'S', name }));
  forgotten = [];
  return messages;
}

/** Runs protocol messages ending in Sync; an ErrorResponse is thrown as `query()` throws it. */
async function exchange(message, sql, params, options) {
  try {
    return await pglite.execProtocolStream(message, { syncToFs: false });
  } catch (error) {
    if (error instanceof protocol.messages.DatabaseError)
      Object.assign(error, { query: sql, params, queryOptions: options });
    throw error;
  }
}

function concat(parts) {
  let length = 0;
  for (const part of parts) length += part.length;
  const buffer = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    buffer.set(part, offset);
    offset += part.length;
  }
  return buffer;
}
