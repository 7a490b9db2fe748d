import { BaseError, keccak256, TransactionNotFoundError, type Address, type Hex } from 'viem';
import { GatewayError } from '../../core/errors.js';
import type { SignedAuthorizationInput } from '../../core/ports/solver.js';
import { getOutgoingTx, updateOutgoingTx } from '../../store/outgoingTxs.repository.js';
import type { OutgoingTxRecord } from '../../records/outgoingTx.js';
import { mayHaveReachedNode } from '../rpcErrors.js';
import type { Fees } from './payload.js';
import type { SenderState } from './state.js';

/**
 * Signing and broadcasting one version of a transaction, and what a node's answer means: shared by the first send
 * (`sending.ts`) and by the rebroadcasts and fee bumps of a stuck one (`replacement.ts`).
 */

/**
 * What a node made of `eth_sendRawTransaction`. `unknown` is a transport failure (timeout, refused, HTTP 5xx):
 * the node may or may not have it, so its nonce stays taken and it is rebroadcast later.
 */
export type BroadcastOutcome =
  | { kind: 'accepted' }
  | { kind: 'nonce-taken'; message: string }
  | { kind: 'rejected'; message: string; insufficientFunds: boolean }
  | { kind: 'unknown'; error: unknown };

const alreadyKnown = /already known|already imported|known transaction|already exists|already in (the )?(tx)?pool/i;
const nonceTaken =
  /nonce too low|nonce has already been used|nonce is too low|old nonce|replacement transaction underpriced|replacement fee too low/i;
const insufficientFunds = /insufficient funds/i;

export async function sign(
  state: SenderState,
  tx: {
    to: Address;
    data: Hex;
    value: bigint;
    gas: bigint;
    nonce: bigint;
    authorizationList?: SignedAuthorizationInput[] | undefined;
  } & Fees,
) {
  const common = {
    chainId: state.chainId,
    to: tx.to,
    data: tx.data,
    value: tx.value,
    gas: tx.gas,
    nonce: Number(tx.nonce),
    maxFeePerGas: tx.maxFeePerGas,
    maxPriorityFeePerGas: tx.maxPriorityFeePerGas,
  };
  const raw =
    tx.authorizationList === undefined
      ? await state.account.signTransaction({ ...common, type: 'eip1559' })
      : await state.account.signTransaction({
          ...common,
          type: 'eip7702',
          authorizationList: tx.authorizationList.map(toViemAuthorization),
        });
  return { raw, hash: keccak256(raw) };
}

export async function estimateFees(state: SenderState): Promise<Fees> {
  try {
    const fees = await state.client.estimateFeesPerGas();
    return { maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas };
  } catch (error) {
    throw rpcFailure(state, 'estimating fees', error);
  }
}

export async function broadcast(state: SenderState, raw: Hex, hash: Hex): Promise<BroadcastOutcome> {
  try {
    await state.client.sendRawTransaction({ serializedTransaction: raw });
    return { kind: 'accepted' };
  } catch (error) {
    if (mayHaveReachedNode(error)) return { kind: 'unknown', error };
    const message = messageOf(error);
    if (alreadyKnown.test(message)) return { kind: 'accepted' };
    if (nonceTaken.test(message)) {
      // Ours when the chain (or the pool) has this very hash: an earlier attempt got through.
      try {
        await state.client.getTransaction({ hash });
        return { kind: 'accepted' };
      } catch (lookup) {
        if (lookup instanceof TransactionNotFoundError) return { kind: 'nonce-taken', message };
        return { kind: 'unknown', error: lookup };
      }
    }
    return { kind: 'rejected', message, insufficientFunds: insufficientFunds.test(message) };
  }
}

/** A `prepared` row a node accepted becomes `broadcast` with that hash (re-read if it moved on meanwhile). */
export async function markBroadcast(state: SenderState, row: OutgoingTxRecord, hash: Hex): Promise<OutgoingTxRecord> {
  const updated = await updateOutgoingTx(state.db, row.id, {
    status: 'broadcast',
    fromStatus: 'prepared',
    hash,
    now: state.now(),
  });
  return updated ?? (await getOutgoingTx(state.db, row.id)) ?? row;
}

/** A node's refusal of the row's transaction: `INSUFFICIENT_LIQUIDITY` when the solver cannot pay for it. */
export function rejection(
  state: SenderState,
  row: OutgoingTxRecord,
  message: string,
  insufficient: boolean,
  cause?: unknown,
): GatewayError {
  return insufficient
    ? new GatewayError(
        'INSUFFICIENT_LIQUIDITY',
        `Chain ${state.chainId}: the solver cannot pay for its ${row.kind} transaction: ${message}`,
        {
          data: `outgoingTxId=${row.id}`,
          cause,
        },
      )
    : new GatewayError(
        'DESTINATION_TX_FAILED',
        `Chain ${state.chainId}: the node rejected the ${row.kind} transaction: ${message}`,
        {
          data: `outgoingTxId=${row.id}`,
          cause,
        },
      );
}

/**
 * A failed RPC call of the sender as `RPC_HTTP_ERROR`, worded `Chain <id>: <what> failed: <the node's words>`
 * (`waitForReceipt` rides it out). Reads elsewhere in `src/chain` word theirs with `rpcErrors.ts`.
 */
export const rpcFailure = (state: SenderState, what: string, cause: unknown) =>
  new GatewayError('RPC_HTTP_ERROR', `Chain ${state.chainId}: ${what} failed: ${messageOf(cause)}`, { cause });

/** The SDK's authorization shape as viem signs it. */
export const toViemAuthorization = (a: SignedAuthorizationInput) => ({
  address: a.address,
  chainId: a.chainId,
  nonce: a.nonce,
  yParity: a.yParity,
  r: a.r,
  s: a.s,
});

/** The node's own words when there are some (viem puts them in `details`), else the message. */
export function messageOf(error: unknown): string {
  if (error instanceof BaseError) return [error.shortMessage, error.details].filter(Boolean).join(': ');
  return error instanceof Error ? error.message : String(error);
}
