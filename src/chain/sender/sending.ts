import { BaseError, ExecutionRevertedError, type Hex } from 'viem';
import { GatewayError } from '../../core/errors.js';
import { withGasMargin } from '../../core/gasMargin.js';
import type { SendParameters } from '../../core/solver/ports.js';
import { isUniqueViolation } from '../../store/errors.js';
import { groupedCalls } from '../../store/groupedCalls.js';
import {
  getLiveOutgoingTx,
  insertOutgoingTx,
  insertOutgoingTxs,
  listHeldOutgoingTxNonces,
  listUnminedOutgoingTxs,
  markOutgoingTxsBroadcast,
  outgoingTxRequestKindKey,
  outgoingTxSignerNonceKey,
  releaseOutgoingTxNonce,
  reviseOutgoingTx,
  type OutgoingTxRecord,
} from '../../store/outgoingTxs.repository.js';
import { describeExecutionFailure } from '../revertReasons.js';
import { mayHaveReachedNode } from '../rpcErrors.js';
import { broadcast, markBroadcast, messageOf, rejection, rpcFailure, sign, toViemAuthorization } from './broadcast.js';
import type { FeeCaps } from './feeCaps.js';
import type { GasValue } from './gasValue.js';
import { readPayload, toJson, versionFields, type Fees, type TxPayload } from './payload.js';
import { assertRunning, crash, type SenderState } from './state.js';

/** Attempts at finding a free nonce (another instance or a foreign transaction took it) before giving up. */
const NONCE_ATTEMPTS = 5;

/** Most sends one turn of the queue records in one statement and broadcasts together. */
const SEND_BATCH = 16;

export interface Sending {
  send: (tx: SendParameters) => Promise<OutgoingTxRecord>;
  recover: () => Promise<OutgoingTxRecord[]>;
  /**
   * Signs a mined transaction that a reorg dropped again, on a fresh nonce (its own was used by another), records it
   * `broadcast` with the new hash and broadcasts it; null when the row is no longer where it was.
   */
  resignDropped: (row: OutgoingTxRecord) => Promise<OutgoingTxRecord | null>;
  /** The write of a row's move to `broadcast` while it is under way (a receipt wait reads the row after it). */
  marking(this: void, outgoingTxId: number): Promise<void> | undefined;
  /**
   * Settles once the sends and the recovery queued so far have, their rows' moves to `broadcast` included (a send
   * returns before its row's move lands).
   */
  idle(): Promise<unknown>;
}

/**
 * Sending and restart recovery: the owner of the signer's nonce on the chain.
 *
 * `send` and `recover` run one at a time in a queue. A send takes the next nonce, signs, records the row
 * (`prepared`, signed bytes included) and only then broadcasts it; the first nonce is the larger of the chain's
 * pending count and the highest nonce recorded for this signer + 1. A node's outright rejection of that first
 * broadcast marks the row `failed` with its nonce released, which the next send reuses; a nonce taken by a
 * transaction this sender did not make is skipped by re-signing the same row on the next free nonce. `recover`
 * rebroadcasts every unmined row in nonce order and reads the next nonce afresh.
 *
 * Sends that wait for the queue together (the fills of one origin block) take one turn: consecutive nonces, one
 * insert of all their rows, then their broadcasts in nonce order (`turn`). Every row is still recorded before
 * any broadcast; a rejected one releases its nonce and the rows after it, never broadcast, are re-signed one
 * nonce down, so no gap is left (as a single send reuses a released nonce). The batch's sends return together,
 * once all are broadcast, so that what their callers write next goes together too.
 */
export function createSending(state: SenderState, gasValue: GasValue, feeCaps: FeeCaps): Sending {
  const { chainId, client, address, db, log, now, scope } = state;
  /** The next nonce to hand out; undefined = read it again from the chain and the database. */
  let nextNonce: bigint | undefined;
  /** Tail of the send queue (the per-sender mutex). */
  let queue: Promise<unknown> = Promise.resolve();
  /** The nonce `release` gave back last (a batch re-signs the rows after it one nonce down). */
  let released: bigint | undefined;
  /** Rows being marked `broadcast` beside their senders (`send` returns first), by row id; `idle` waits for them. */
  const marks = new Map<number, Promise<void>>();

  function serialized<T>(work: () => Promise<T>): Promise<T> {
    const run = queue.then(work);
    queue = run.catch(() => undefined);
    return run;
  }

  /**
   * The lowest nonce from the chain's pending count up that no live recorded transaction holds: never a live
   * nonce, and a nonce released below recorded ones is handed out again rather than left as a gap (the rows above
   * it could not be mined until it is used). Usually that is the highest recorded + 1, or the pending count.
   */
  async function freshNonce(): Promise<bigint> {
    const pending = await client.getTransactionCount({ address, blockTag: 'pending' }).catch((error: unknown) => {
      throw rpcFailure(state, 'reading the pending nonce', error);
    });
    let nonce = BigInt(pending);
    for (const held of await listHeldOutgoingTxNonces(db, scope, nonce)) {
      if (held !== nonce) break;
      nonce += 1n;
    }
    return nonce;
  }

  /** The gas of `tx` simulated as it is sent: from the signer, with the fee caps it carries (`tx.gasprice` is real). */
  async function estimateGas(tx: SendParameters, fees: Fees): Promise<bigint> {
    try {
      const estimate = await client.estimateGas({
        account: address,
        to: tx.to,
        data: tx.data,
        value: tx.value,
        maxFeePerGas: fees.maxFeePerGas,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
        ...(tx.authorizationList === undefined
          ? {}
          : { authorizationList: tx.authorizationList.map(toViemAuthorization) }),
      });
      return withGasMargin(estimate);
    } catch (error) {
      const reverted = error instanceof BaseError && error.walk((e) => e instanceof ExecutionRevertedError) !== null;
      if (!reverted && mayHaveReachedNode(error)) throw rpcFailure(state, 'estimating gas', error);
      // A revert is worded with the contracts' ABIs (`AlreadyReleased(7)`), not its bytes read as text.
      const reason = error instanceof BaseError && reverted ? describeExecutionFailure(error) : messageOf(error);
      throw new GatewayError(
        'DESTINATION_TX_FAILED',
        `Chain ${chainId}: the ${tx.kind} transaction would fail: ${reason}`,
        {
          cause: error,
        },
      );
    }
  }

  /**
   * Releases the nonce of a row whose one and only signed version a node refused (inside the send queue, so the
   * released nonce is the highest handed out and no gap remains), and forgets the cached nonce.
   */
  async function release(row: OutgoingTxRecord, payload: TxPayload, message: string): Promise<void> {
    await releaseOutgoingTxNonce(db, row.id, { payload: toJson({ ...payload, error: message }), now: now() });
    nextNonce = undefined;
    released = BigInt(payload.nonce);
  }

  /**
   * First broadcast of a freshly recorded row, inside the queue. An accepted broadcast returns the hash to mark the
   * row `broadcast` with after the queue: the next send need not wait for that write (until it lands the row stays
   * `prepared`, which a restart's recovery rebroadcasts, exactly as after a crash right after the broadcast).
   */
  async function broadcastNew(
    row: OutgoingTxRecord,
    payload: TxPayload,
    tx: SendParameters & { gas: bigint } & Fees,
  ): Promise<{ row: OutgoingTxRecord; accepted?: Hex }> {
    for (let attempt = 1; ; attempt++) {
      const outcome = await broadcast(state, payload.raw, payload.hash);
      switch (outcome.kind) {
        case 'accepted':
          crash(state, 'broadcast', row.kind);
          log.info({ ...versionFields(state, row, payload), kind: row.kind }, 'transaction broadcast');
          return { row, accepted: payload.hash };
        case 'unknown':
          // It may have reached the node: keep the nonce; waitForReceipt and recover rebroadcast it.
          log.warn(
            { ...versionFields(state, row, payload), err: outcome.error },
            'broadcast failed in transit; the recorded transaction is rebroadcast while waiting for its receipt',
          );
          return { row };
        case 'rejected':
          await release(row, payload, outcome.message);
          log.error(
            {
              ...scope,
              requestId: row.requestId,
              outgoingTxId: row.id,
              nonce: payload.nonce,
              reason: outcome.message,
            },
            'node rejected the transaction; nonce released',
          );
          throw rejection(state, row, outcome.message, outcome.insufficientFunds);
        case 'nonce-taken':
          // Something other than this sender used the key (the nonce is spent there, so moving on leaves no
          // gap): re-sign this same row on the next free nonce. Nothing but this one version was ever sent.
          if (attempt >= NONCE_ATTEMPTS) {
            await release(row, payload, outcome.message);
            throw new GatewayError(
              'SERVICE_UNAVAILABLE',
              `Chain ${chainId}: no free nonce after ${attempt} attempts: ${outcome.message}`,
              {
                data: `outgoingTxId=${row.id}`,
              },
            );
          }
          log.warn(
            { ...scope, requestId: row.requestId, outgoingTxId: row.id, taken: payload.nonce },
            'nonce already used elsewhere; re-signing',
          );
          state.onForeignNonce?.(BigInt(payload.nonce));
          ({ row, payload } = await resign(row, payload, tx));
      }
    }
  }

  /** Re-signs a `prepared` row on a fresh nonce, recording it before anything is broadcast. */
  async function resign(row: OutgoingTxRecord, payload: TxPayload, tx: SendParameters & { gas: bigint } & Fees) {
    for (let attempt = 1; ; attempt++) {
      const nonce = await freshNonce();
      try {
        const revised = await resignAt(row, payload, tx, nonce);
        nextNonce = nonce + 1n;
        return revised;
      } catch (error) {
        // Another instance with this key recorded that nonce meanwhile; `freshNonce` moves past it.
        if (!isUniqueViolation(error, outgoingTxSignerNonceKey) || attempt >= NONCE_ATTEMPTS) throw error;
      }
    }
  }

  /** A send whose gas and fees are read, waiting for its turn in the queue. */
  interface Waiting {
    tx: SendParameters;
    gas: bigint;
    fees: Fees;
  }
  type Sent = { row: OutgoingTxRecord; accepted?: Hex };
  /** How a waiting send's caller learns its outcome. */
  interface Settles {
    settle: (outcome: Promise<Sent>) => void;
    fail: (error: unknown) => void;
  }
  /** Sends waiting for the queue; the next turn takes all of them (at most `SEND_BATCH`). */
  const waiting: Array<Waiting & Settles> = [];
  let turnQueued = false;

  function queued(send: Waiting): Promise<Sent> {
    return new Promise<Sent>((resolve, reject) => {
      waiting.push({ ...send, settle: (outcome) => void outcome.then(resolve, reject), fail: reject });
      if (!turnQueued) {
        turnQueued = true;
        void serialized(turn);
      }
    });
  }

  /**
   * One turn of the queue: the sends waiting now. One alone goes as before (`sendOne`). Several get consecutive
   * nonces, are signed, and are recorded `prepared` in one statement before any of them is broadcast; then they
   * are broadcast one after the other in nonce order, without a round trip to the database between them.
   */
  async function turn(): Promise<void> {
    turnQueued = false;
    const batch = waiting.splice(0, SEND_BATCH);
    if (waiting.length > 0) {
      turnQueued = true;
      void serialized(turn);
    }
    if (batch.length === 1) {
      const [one] = batch as [(typeof batch)[number]];
      const outcome = sendOne(one);
      one.settle(outcome);
      await outcome.catch(() => undefined);
      return;
    }
    let recorded: Array<{ row: OutgoingTxRecord; payload: TxPayload }> | undefined;
    try {
      assertRunning(state);
      recorded = await recordBatch(batch);
    } catch (error) {
      for (const send of batch) send.fail(error);
      return;
    }
    if (recorded === undefined) {
      // A unique index refused the batch (a conflict, or a nonce another instance took): nothing was recorded
      // and no nonce consumed; each goes on its own, which sorts out which one conflicts.
      for (const send of batch) {
        const outcome = sendOne(send);
        send.settle(outcome);
        await outcome.catch(() => undefined);
      }
      return;
    }
    for (const { row } of recorded) crash(state, 'recorded', row.kind);
    await broadcastBatch(batch, recorded);
  }

  /** Signs the batch on consecutive nonces and records it (`prepared`); undefined when a unique index refused it. */
  async function recordBatch(
    batch: Waiting[],
  ): Promise<Array<{ row: OutgoingTxRecord; payload: TxPayload }> | undefined> {
    const first = nextNonce ?? (await freshNonce());
    const payloads: TxPayload[] = [];
    for (const [index, { tx, gas, fees }] of batch.entries()) {
      const nonce = first + BigInt(index);
      payloads.push(payloadOf(tx, gas, fees, nonce, await sign(state, { ...tx, gas, nonce, ...fees })));
    }
    let rows: OutgoingTxRecord[];
    try {
      rows = await insertOutgoingTxs(
        db,
        batch.map(({ tx }, index) => ({
          chainId,
          requestId: tx.requestId,
          kind: tx.kind,
          signer: state.signer,
          nonce: first + BigInt(index),
          status: 'prepared' as const,
          payload: toJson(payloads[index]!),
          now: now(),
        })),
      );
    } catch (error) {
      if (isUniqueViolation(error, outgoingTxRequestKindKey) || isUniqueViolation(error, outgoingTxSignerNonceKey))
        return undefined;
      throw error;
    }
    nextNonce = first + BigInt(batch.length);
    return rows.map((row, index) => ({ row, payload: payloads[index]! }));
  }

  /**
   * Broadcasts a recorded batch in nonce order. When the node refuses one outright its nonce is released
   * (`broadcastNew`), and the rows after it, recorded but never broadcast, are re-signed one nonce down each
   * before their broadcast, so no gap is left; a nonce taken elsewhere moves its row on as for a single send.
   */
  async function broadcastBatch(
    batch: Array<Waiting & Settles>,
    recorded: Array<{ row: OutgoingTxRecord; payload: TxPayload }>,
  ): Promise<void> {
    // The senders learn their outcomes together, once the batch is broadcast: their callers' next writes (a fill's
    // `submitted`, the rows' moves to `broadcast`) then go together too, one statement each for the batch, where
    // the first alone and the rest after it made them wait for the database twice.
    const outcomes: Array<() => void> = [];
    try {
      await broadcastInOrder(batch, recorded, outcomes);
    } finally {
      for (const settle of outcomes) settle();
    }
  }

  /** `broadcastBatch`'s broadcasts, one after the other; each send's outcome is pushed to `outcomes`. */
  async function broadcastInOrder(
    batch: Array<Waiting & Settles>,
    recorded: Array<{ row: OutgoingTxRecord; payload: TxPayload }>,
    outcomes: Array<() => void>,
  ): Promise<void> {
    /** The nonce the next row moves to, once a nonce below it was released. */
    let shiftTo: bigint | undefined;
    let shifted = false;
    for (const [index, send] of batch.entries()) {
      let { row, payload } = recorded[index]!;
      const tx = { ...send.tx, gas: send.gas, ...send.fees };
      released = undefined;
      let resignFailed = false;
      const outcome = (async () => {
        if (shiftTo !== undefined) {
          const nonce = shiftTo;
          shifted = true;
          try {
            ({ row, payload } = await resignAt(row, payload, tx, nonce));
          } catch (error) {
            resignFailed = true;
            throw error;
          }
        }
        return broadcastNew(row, payload, tx);
      })();
      outcomes.push(() => send.settle(outcome));
      await outcome.catch(() => undefined);
      if (released !== undefined) shiftTo = released;
      else if (resignFailed) {
        // The row keeps its recorded nonce (`prepared`: its send failed, and resuming the request or a restart's
        // recovery broadcasts it) and the rest go on their own; the nonce it did not move to stays free, and
        // `freshNonce` hands that gap out to the next send.
        shiftTo = undefined;
      } else if (shiftTo !== undefined) shiftTo += 1n;
    }
    if (shifted || shiftTo !== undefined) nextNonce = undefined; // read the chain and the table again
  }

  /** Re-signs a `prepared` row, never broadcast, on the given nonce (a lower one just released, or a fresh one). */
  async function resignAt(
    row: OutgoingTxRecord,
    payload: TxPayload,
    tx: SendParameters & { gas: bigint } & Fees,
    nonce: bigint,
  ): Promise<{ row: OutgoingTxRecord; payload: TxPayload }> {
    const signed = await sign(state, { ...tx, nonce });
    const next: TxPayload = { ...payload, nonce: nonce.toString(), raw: signed.raw, hash: signed.hash };
    const revised = await reviseOutgoingTx(db, row.id, {
      payload: toJson(next),
      nonce,
      fromStatuses: ['prepared'],
      now: now(),
    });
    if (revised === null) throw new Error(`outgoing tx ${row.id} left 'prepared' while it was being sent`);
    return { row: revised, payload: next };
  }

  function payloadOf(
    tx: SendParameters,
    gas: bigint,
    fees: Fees,
    nonce: bigint,
    signed: { raw: Hex; hash: Hex },
  ): TxPayload {
    return {
      to: tx.to,
      data: tx.data,
      value: tx.value.toString(),
      gas: gas.toString(),
      nonce: nonce.toString(),
      maxFeePerGas: fees.maxFeePerGas.toString(),
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString(),
      raw: signed.raw,
      hash: signed.hash,
      initialMaxFeePerGas: fees.maxFeePerGas.toString(),
      bumps: 0,
      ...(tx.authorizationList === undefined ? {} : { authorizationList: tx.authorizationList }),
    };
  }

  /** One send alone in its turn: take the next nonce, sign, record, broadcast. */
  async function sendOne({ tx, gas, fees }: Waiting): Promise<Sent> {
    assertRunning(state);
    for (let attempt = 1; ; attempt++) {
      const nonce = nextNonce ?? (await freshNonce());
      const signed = await sign(state, { ...tx, gas, nonce, ...fees });
      const payload = payloadOf(tx, gas, fees, nonce, signed);
      let row: OutgoingTxRecord;
      try {
        row = await insertOutgoingTx(db, {
          chainId,
          requestId: tx.requestId,
          kind: tx.kind,
          signer: state.signer,
          nonce,
          status: 'prepared',
          payload: toJson(payload),
          now: now(),
        });
      } catch (error) {
        // The nonce was not consumed: `nextNonce` is untouched.
        if (isUniqueViolation(error, outgoingTxRequestKindKey)) throw conflict(tx, undefined, error);
        if (isUniqueViolation(error, outgoingTxSignerNonceKey) && attempt < NONCE_ATTEMPTS) {
          nextNonce = undefined; // another instance with this key recorded it; move past
          continue;
        }
        throw error;
      }
      nextNonce = nonce + 1n;
      crash(state, 'recorded', row.kind);
      return broadcastNew(row, payload, { ...tx, gas, ...fees });
    }
  }

  async function send(tx: SendParameters): Promise<OutgoingTxRecord> {
    // The receipt will want the native price: read it while the transaction is on its way.
    gasValue.readAhead();
    assertRunning(state);
    // One live transaction per (request, kind): the unique index of the row's insert below decides (CONFLICT, the
    // nonce untouched), so a send reads no row first. Only when the gas or fee read fails is the live row looked
    // for, so that a conflict still wins over an estimate's failure (a fill already on chain no longer simulates).
    const feesRead = feeCaps.read();
    const gasRead = tx.gas === undefined ? feesRead.then((fees) => estimateGas(tx, fees)) : Promise.resolve(tx.gas);
    gasRead.catch(() => undefined);
    feesRead.catch(() => undefined);
    let gas: bigint;
    let fees: Fees;
    try {
      gas = await gasRead;
      fees = await feesRead;
    } catch (error) {
      const live = await getLiveOutgoingTx(db, tx.requestId, tx.kind);
      if (live !== undefined) throw conflict(tx, live.id);
      throw error;
    }
    const sent = await queued({ tx, gas, fees });
    if (sent.accepted === undefined) return sent.row;
    // The caller goes on once the node has the transaction (a fill writes `submitted` next), its row's move to
    // `broadcast` going on beside: the record returned is the row as that move writes it. Until the move lands the
    // row is `prepared`, which a receipt wait rebroadcasts (the node answers "already known") and a restart's
    // recovery rebroadcasts, exactly as after a crash right after the broadcast; a failed move is left to them.
    const at = now();
    const marking = markBeside(sent.row.id, sent.accepted, at);
    marks.set(sent.row.id, marking);
    void marking
      .finally(() => marks.delete(sent.row.id))
      .catch((error: unknown) =>
        log.warn(
          { ...scope, requestId: sent.row.requestId, outgoingTxId: sent.row.id, err: error },
          "marking a broadcast transaction failed; it stays 'prepared' and is rebroadcast until mined",
        ),
      );
    return asBroadcast(sent.row, sent.accepted, at);
  }

  /**
   * Writes a row's move to `broadcast` (`markBroadcast`'s, without its read back): the first at once, and those
   * that come while a write is under way (the rest of a batch, as their broadcasts are accepted) together in the
   * next statement (`groupedCalls`, `markOutgoingTxsBroadcast`), a round trip each saved on the way of the fills'
   * `submitted`.
   */
  const markGrouped = groupedCalls(
    async (moves: ReadonlyArray<{ id: number; hash: Hex; now: number }>) => {
      await markOutgoingTxsBroadcast(db, moves);
      return moves.map(() => undefined);
    },
    undefined,
    // A batch's sends return in one turn (`broadcastBatch`): their marks go in one statement.
    { gatherTurn: true },
  );
  const markBeside = (id: number, hash: Hex, at: number): Promise<void> => markGrouped({ id, hash, now: at });

  /** A `prepared` row as `markBroadcast` leaves it: `broadcast`, with the accepted hash. */
  const asBroadcast = (row: OutgoingTxRecord, hash: Hex, at: number): OutgoingTxRecord => {
    const accepted = hash.toLowerCase();
    return {
      ...row,
      status: 'broadcast',
      hashes: row.hashes.includes(accepted) ? row.hashes : [...row.hashes, accepted],
      updatedAt: at,
    };
  };

  const conflict = (tx: SendParameters, existingId?: number, cause?: unknown) =>
    new GatewayError('CONFLICT', `A live ${tx.kind} transaction already exists for request ${tx.requestId}`, {
      ...(existingId === undefined ? {} : { data: `outgoingTxId=${existingId}` }),
      cause,
    });

  const resignDropped = (row: OutgoingTxRecord) =>
    serialized(async () => {
      assertRunning(state);
      const payload = readPayload(row);
      const fees = await feeCaps.read();
      const tx = {
        to: payload.to,
        data: payload.data,
        value: BigInt(payload.value),
        gas: BigInt(payload.gas),
        authorizationList: payload.authorizationList,
        ...fees,
      };
      for (let attempt = 1; ; attempt++) {
        const nonce = await freshNonce();
        const signed = await sign(state, { ...tx, nonce });
        const next: TxPayload = {
          ...payload,
          nonce: nonce.toString(),
          maxFeePerGas: fees.maxFeePerGas.toString(),
          maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString(),
          initialMaxFeePerGas: fees.maxFeePerGas.toString(),
          bumps: 0,
          raw: signed.raw,
          hash: signed.hash,
        };
        let revised: OutgoingTxRecord | null;
        try {
          // Recorded before the broadcast, as every version is.
          revised = await reviseOutgoingTx(db, row.id, {
            payload: toJson(next),
            nonce,
            hash: signed.hash,
            status: 'broadcast',
            fromStatuses: [row.status],
            now: now(),
          });
        } catch (error) {
          if (!isUniqueViolation(error, outgoingTxSignerNonceKey) || attempt >= NONCE_ATTEMPTS) throw error;
          continue;
        }
        nextNonce = undefined;
        if (revised === null) return null;
        await broadcast(state, signed.raw, signed.hash);
        return revised;
      }
    });

  const recover = () =>
    serialized(async () => {
      assertRunning(state);
      const rows = await listUnminedOutgoingTxs(db, scope);
      const recovered: OutgoingTxRecord[] = [];
      // Nonce order, so the node never sees a gap it would have to queue behind.
      for (const row of rows) {
        const payload = readPayload(row);
        const outcome = await broadcast(state, payload.raw, payload.hash);
        log.info({ ...versionFields(state, row, payload), outcome: outcome.kind }, 'recovered transaction rebroadcast');
        recovered.push(
          outcome.kind === 'accepted' && row.status === 'prepared'
            ? await markBroadcast(state, row, payload.hash)
            : row,
        );
      }
      nextNonce = undefined; // read the chain and the table again before the next send
      return recovered;
    });

  return {
    send,
    recover,
    resignDropped,
    marking: (id) => marks.get(id),
    idle: () => Promise.allSettled([queue, ...marks.values()]),
  };
}
