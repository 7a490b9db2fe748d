import type { Hex } from 'viem';
import { GatewayError } from '../../core/errors.js';
import type { SendParameters } from '../../core/ports/solver.js';
import { isUniqueViolation } from '../../store/errors.js';
import { groupedCalls } from '../../store/groupedCalls.js';
import {
  getLiveOutgoingTx,
  insertOutgoingTx,
  listUnminedOutgoingTxs,
  markOutgoingTxsBroadcast,
  outgoingTxRequestKindKey,
  outgoingTxSignerNonceKey,
  releaseOutgoingTxNonce,
  reviseOutgoingTx,
} from '../../store/outgoingTxs.repository.js';
import type { OutgoingTxRecord } from '../../records/outgoingTx.js';
import { broadcast, markBroadcast, rejection, sign } from './broadcast.js';
import type { FeeCaps } from './feeCaps.js';
import type { GasValue } from './gasValue.js';
import { estimateGas } from './estimateGas.js';
import { payloadOf, readPayload, toJson, versionFields, type Fees, type TxPayload } from './payload.js';
import { createNonceAllocator } from './nonces.js';
import { createBatchTurn, type Sent, type Waiting } from './batchTurn.js';
import { createSendQueue } from './sendQueue.js';
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
 * Sending and restart recovery: the owner of the signer's nonce on the chain, through its nonce allocator
 * (`nonces.ts`) and its send queue (`sendQueue.ts`, whose turns are `batchTurn.ts`).
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
  const { chainId, db, log, now, scope } = state;
  const nonces = createNonceAllocator(state);
  const queue = createSendQueue<Waiting, Sent>({
    batchSize: SEND_BATCH,
    turn: (batch) => turn(batch),
  });
  const { serialized } = queue;
  /** Rows being marked `broadcast` beside their senders (`send` returns first), by row id; `idle` waits for them. */
  const marks = new Map<number, Promise<void>>();

  /**
   * Releases the nonce of a row whose one and only signed version a node refused (inside the send queue, so the
   * released nonce is the highest handed out and no gap remains), and forgets the cached nonce.
   */
  async function release(row: OutgoingTxRecord, payload: TxPayload, message: string): Promise<void> {
    await releaseOutgoingTxNonce(db, row.id, { payload: toJson({ ...payload, error: message }), now: now() });
    nonces.release(BigInt(payload.nonce));
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
      const nonce = await nonces.fresh();
      try {
        const revised = await resignAt(row, payload, tx, nonce);
        nonces.setNext(nonce + 1n);
        return revised;
      } catch (error) {
        // Another instance with this key recorded that nonce meanwhile; `nonces.fresh` moves past it.
        if (!isUniqueViolation(error, outgoingTxSignerNonceKey) || attempt >= NONCE_ATTEMPTS) throw error;
      }
    }
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

  /** One send alone in its turn: take the next nonce, sign, record, broadcast. */
  async function sendOne({ tx, gas, fees }: Waiting): Promise<Sent> {
    assertRunning(state);
    for (let attempt = 1; ; attempt++) {
      const nonce = await nonces.next();
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
        // The nonce was not consumed: the allocator's next nonce is untouched.
        if (isUniqueViolation(error, outgoingTxRequestKindKey)) throw conflict(tx, undefined, error);
        if (isUniqueViolation(error, outgoingTxSignerNonceKey) && attempt < NONCE_ATTEMPTS) {
          nonces.forget(); // another instance with this key recorded it; move past
          continue;
        }
        throw error;
      }
      nonces.setNext(nonce + 1n);
      crash(state, 'recorded', row.kind);
      return broadcastNew(row, payload, { ...tx, gas, ...fees });
    }
  }

  const turn = createBatchTurn({ state, nonces, sendOne, broadcastNew, resignAt });

  async function send(tx: SendParameters): Promise<OutgoingTxRecord> {
    // The receipt will want the native price: read it while the transaction is on its way.
    gasValue.readAhead();
    assertRunning(state);
    // One live transaction per (request, kind): the unique index of the row's insert below decides (CONFLICT, the
    // nonce untouched), so a send reads no row first. Only when the gas or fee read fails is the live row looked
    // for, so that a conflict still wins over an estimate's failure (a fill already on chain no longer simulates).
    const feesRead = feeCaps.read();
    const gasRead =
      tx.gas === undefined ? feesRead.then((fees) => estimateGas(state, tx, fees)) : Promise.resolve(tx.gas);
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
    const sent = await queue.enqueue({ tx, gas, fees });
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
        const nonce = await nonces.fresh();
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
        nonces.forget();
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
      nonces.forget(); // read the chain and the table again before the next send
      return recovered;
    });

  return {
    send,
    recover,
    resignDropped,
    marking: (id) => marks.get(id),
    idle: () => Promise.allSettled([queue.tail(), ...marks.values()]),
  };
}
