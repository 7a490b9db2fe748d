import type { Hex } from 'viem';
import type { SendParameters } from '../../core/ports/solver.js';
import { isUniqueViolation } from '../../store/errors.js';
import {
  insertOutgoingTxs,
  outgoingTxRequestKindKey,
  outgoingTxSignerNonceKey,
} from '../../store/outgoingTxs.repository.js';
import type { OutgoingTxRecord } from '../../records/outgoingTx.js';
import { sign } from './broadcast.js';
import type { NonceAllocator } from './nonces.js';
import { payloadOf, toJson, type Fees, type TxPayload } from './payload.js';
import type { Settles } from './sendQueue.js';
import { assertRunning, crash, type SenderState } from './state.js';

/** A send whose gas and fees are read, waiting for its turn in the queue. */
export interface Waiting {
  tx: SendParameters;
  gas: bigint;
  fees: Fees;
}
export type Sent = { row: OutgoingTxRecord; accepted?: Hex };
type Signed = { row: OutgoingTxRecord; payload: TxPayload };
type Ready = SendParameters & { gas: bigint } & Fees;

/** What a turn uses of the sending around it. */
export interface BatchTurnParameters {
  state: SenderState;
  nonces: NonceAllocator;
  /** One send alone: take the next nonce, sign, record, broadcast. */
  sendOne: (send: Waiting) => Promise<Sent>;
  /** First broadcast of a freshly recorded row (a refused one releases its nonce). */
  broadcastNew: (row: OutgoingTxRecord, payload: TxPayload, tx: Ready) => Promise<Sent>;
  /** Re-signs a `prepared` row, never broadcast, on the given nonce. */
  resignAt: (row: OutgoingTxRecord, payload: TxPayload, tx: Ready, nonce: bigint) => Promise<Signed>;
}

/**
 * The turns of the send queue (`sendQueue.ts`): the sends waiting together get consecutive nonces, one insert of all
 * their rows, then their broadcasts in nonce order.
 */
export function createBatchTurn(params: BatchTurnParameters): (batch: Array<Waiting & Settles<Sent>>) => Promise<void> {
  const { state, nonces, sendOne, broadcastNew, resignAt } = params;
  const { chainId, db, now } = state;

  /** Signs the batch on consecutive nonces and records it (`prepared`); undefined when a unique index refused it. */
  async function recordBatch(
    batch: Waiting[],
  ): Promise<Array<{ row: OutgoingTxRecord; payload: TxPayload }> | undefined> {
    const first = await nonces.next();
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
    nonces.setNext(first + BigInt(batch.length));
    return rows.map((row, index) => ({ row, payload: payloads[index]! }));
  }

  /**
   * Broadcasts a recorded batch in nonce order. When the node refuses one outright its nonce is released
   * (`broadcastNew`), and the rows after it, recorded but never broadcast, are re-signed one nonce down each
   * before their broadcast, so no gap is left; a nonce taken elsewhere moves its row on as for a single send.
   */
  async function broadcastBatch(
    batch: Array<Waiting & Settles<Sent>>,
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
    batch: Array<Waiting & Settles<Sent>>,
    recorded: Array<{ row: OutgoingTxRecord; payload: TxPayload }>,
    outcomes: Array<() => void>,
  ): Promise<void> {
    /** The nonce the next row moves to, once a nonce below it was released. */
    let shiftTo: bigint | undefined;
    let shifted = false;
    for (const [index, send] of batch.entries()) {
      let { row, payload } = recorded[index]!;
      const tx = { ...send.tx, gas: send.gas, ...send.fees };
      nonces.clearReleased();
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
      const released = nonces.lastReleased();
      if (released !== undefined) shiftTo = released;
      else if (resignFailed) {
        // The row keeps its recorded nonce (`prepared`: its send failed, and resuming the request or a restart's
        // recovery broadcasts it) and the rest go on their own; the nonce it did not move to stays free, and
        // `nonces.fresh` hands that gap out to the next send.
        shiftTo = undefined;
      } else if (shiftTo !== undefined) shiftTo += 1n;
    }
    if (shifted || shiftTo !== undefined) nonces.forget(); // read the chain and the table again
  }

  /**
   * One turn of the queue: the sends waiting now. One alone is sent on its own (`sendOne`). Several get consecutive
   * nonces, are signed, and are recorded `prepared` in one statement before any of them is broadcast; then they
   * are broadcast one after the other in nonce order, without a round trip to the database between them.
   */
  return async function turn(batch: Array<Waiting & Settles<Sent>>): Promise<void> {
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
  };
}
