import type { Address, Hex } from 'viem';
import { sentTxFactsJson } from '../../core/ledger/sentTxFacts.js';
import type { SenderState } from './state.js';
import type { SendParameters, SignedAuthorizationInput } from '../../core/ports/solver.js';
import type { JsonObject } from '../../records/json.js';
import type { OutgoingTxRecord } from '../../records/outgoingTx.js';

/** The stored `payload`: everything needed to rebroadcast or re-sign without the caller (decimal strings). */
export interface TxPayload {
  to: Address;
  data: Hex;
  value: string;
  gas: string;
  nonce: string;
  maxFeePerGas: string;
  maxPriorityFeePerGas: string;
  /** The latest signed transaction and its hash (every earlier hash is in `hashes`). */
  raw: Hex;
  hash: Hex;
  /** `maxFeePerGas` of the first signature: the bump cap is a multiple of it. */
  initialMaxFeePerGas: string;
  bumps: number;
  /** Why a node rejected it, when it did. */
  error?: string;
  /** EIP-7702 authorizations of a type-4 transaction (a gasless batch); absent for type 2. */
  authorizationList?: SignedAuthorizationInput[];
  /** What it pays besides its gas, for the ledger (`sentTxFactsJson`); absent when nothing. */
  ledger?: JsonObject;
}

export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

export function readPayload(row: OutgoingTxRecord): TxPayload {
  const p = row.payload as Partial<Record<keyof TxPayload, unknown>>;
  const strings = [
    'to',
    'data',
    'value',
    'gas',
    'nonce',
    'maxFeePerGas',
    'maxPriorityFeePerGas',
    'raw',
    'hash',
    'initialMaxFeePerGas',
  ] as const;
  for (const key of strings) {
    if (typeof p[key] !== 'string')
      throw new Error(`outgoing tx ${row.id}: payload.${key} is missing; it was not recorded by this sender`);
  }
  return { ...(row.payload as unknown as TxPayload), bumps: typeof p.bumps === 'number' ? p.bumps : 0 };
}

export const toJson = (payload: TxPayload): JsonObject => ({ ...payload }) as unknown as JsonObject;

/** The log fields that name one signed version of a row: chain, signer, request, row, nonce and hash. */
export const versionFields = (state: SenderState, row: OutgoingTxRecord, payload: TxPayload) => ({
  ...state.scope,
  requestId: row.requestId,
  outgoingTxId: row.id,
  nonce: payload.nonce,
  hash: payload.hash,
});

/** The payload of a send's first signed version. */
export function payloadOf(
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
    ...(tx.ledger === undefined ? {} : { ledger: sentTxFactsJson(tx.ledger) }),
  };
}
