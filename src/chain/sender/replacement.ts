import { getOutgoingTx, reviseOutgoingTx } from '../../store/outgoingTxs.repository.js';
import type { OutgoingTxRecord } from '../../records/outgoingTx.js';
import { broadcast, estimateFees, markBroadcast, sign } from './broadcast.js';
import { toJson, versionFields, type TxPayload } from './payload.js';
import type { SenderState } from './state.js';

/** How far a stuck transaction's fees are raised (validated by `createTransactionSender`). */
export interface ReplacementSettings {
  /** How much each replacement raises both fee caps, in percent (nodes require at least 10). */
  feeBumpPercent: bigint;
  /** Bumps never raise `maxFeePerGas` beyond this multiple of the first signature's. */
  maxFeeMultiplier: bigint;
}

/**
 * Re-signs the same nonce with higher fees, records the new hash, then broadcasts it. At the fee cap, rebroadcasts
 * the latest version as it is.
 */
export async function bump(
  state: SenderState,
  settings: ReplacementSettings,
  row: OutgoingTxRecord,
  payload: TxPayload,
): Promise<{ row: OutgoingTxRecord; payload: TxPayload }> {
  const { db, log, now, scope } = state;
  const current = await estimateFees(state);
  const raise = (fee: bigint) => (fee * (100n + settings.feeBumpPercent) + 99n) / 100n;
  const cap = BigInt(payload.initialMaxFeePerGas) * settings.maxFeeMultiplier;
  const oldMax = BigInt(payload.maxFeePerGas);
  const oldTip = BigInt(payload.maxPriorityFeePerGas);
  const maxFeePerGas = min(max(raise(oldMax), current.maxFeePerGas), cap);
  const maxPriorityFeePerGas = min(max(raise(oldTip), current.maxPriorityFeePerGas), maxFeePerGas);
  // Nodes accept a replacement only when both caps rise by at least 10%.
  const replaceable = (old: bigint, fee: bigint) => fee * 100n >= old * 110n;
  if (!replaceable(oldMax, maxFeePerGas) || !replaceable(oldTip, maxPriorityFeePerGas)) {
    log.warn(
      {
        ...scope,
        requestId: row.requestId,
        outgoingTxId: row.id,
        nonce: payload.nonce,
        maxFeePerGas: payload.maxFeePerGas,
      },
      'stuck transaction is at its fee cap; rebroadcasting it as is',
    );
    const outcome = await broadcast(state, payload.raw, payload.hash);
    if (outcome.kind === 'accepted' && row.status === 'prepared') row = await markBroadcast(state, row, payload.hash);
    return { row, payload };
  }
  const signed = await sign(state, {
    to: payload.to,
    data: payload.data,
    value: BigInt(payload.value),
    gas: BigInt(payload.gas),
    nonce: BigInt(payload.nonce),
    maxFeePerGas,
    maxPriorityFeePerGas,
    authorizationList: payload.authorizationList,
  });
  const next: TxPayload = {
    ...payload,
    maxFeePerGas: maxFeePerGas.toString(),
    maxPriorityFeePerGas: maxPriorityFeePerGas.toString(),
    raw: signed.raw,
    hash: signed.hash,
    bumps: payload.bumps + 1,
  };
  // Recorded first: whichever of the hashes gets mined, a restart still finds it.
  const revised = await reviseOutgoingTx(db, row.id, {
    payload: toJson(next),
    hash: signed.hash,
    fromStatuses: ['prepared', 'broadcast'],
    now: now(),
  });
  if (revised === null) return { row: (await getOutgoingTx(db, row.id)) ?? row, payload };
  const outcome = await broadcast(state, signed.raw, signed.hash);
  log.warn(
    {
      ...scope,
      requestId: row.requestId,
      outgoingTxId: row.id,
      nonce: payload.nonce,
      hash: signed.hash,
      maxFeePerGas: next.maxFeePerGas,
      outcome: outcome.kind,
    },
    'transaction stuck; replaced with higher fees',
  );
  const updated =
    outcome.kind === 'accepted' && revised.status === 'prepared'
      ? await markBroadcast(state, revised, signed.hash)
      : revised;
  return { row: updated, payload: next };
}

/**
 * Rebroadcasts a row no node has acknowledged yet. A rejection does not release its nonce here: an earlier
 * version of it (a broadcast that failed in transit, a bump) may still be in some pool and land later, and a
 * row marked failed whose fill lands anyway would be refunded too. It stays and is retried; the periodic
 * re-sign with current fees cures fee rejections, a top-up cures a short balance.
 */
export async function rebroadcastPrepared(
  state: SenderState,
  row: OutgoingTxRecord,
  payload: TxPayload,
): Promise<OutgoingTxRecord> {
  const outcome = await broadcast(state, payload.raw, payload.hash);
  if (outcome.kind === 'accepted') return markBroadcast(state, row, payload.hash);
  const fields = versionFields(state, row, payload);
  if (outcome.kind === 'unknown')
    state.log.warn({ ...fields, err: outcome.error }, 'rebroadcast failed in transit; retrying');
  else if (outcome.kind === 'rejected')
    state.log.error(
      { ...fields, reason: outcome.message },
      'node rejects a recorded transaction; retrying (later nonces wait for it)',
    );
  // 'nonce-taken': the displaced check of waitForReceipt settles it.
  return row;
}

const max = (a: bigint, b: bigint) => (a > b ? a : b);
const min = (a: bigint, b: bigint) => (a < b ? a : b);
