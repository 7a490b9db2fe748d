import {
  gasSpent,
  refundPaid,
  settlementPaid,
  swappedBack,
  type LedgerMovement,
  type SwapTransfer,
  type RefundFacts,
  type SettledDeposit,
  type Valuation,
} from './movements.js';
import type { OutgoingTxRecord } from '../../records/outgoingTx.js';
import type { JsonObject, JsonValue } from '../../records/json.js';

/**
 * What a transaction the solver sends pays besides its gas, as the solver knows it when it builds the transaction:
 * a refund's payment (`RefundFacts`) or a settlement batch's releases. The sender stores them with the transaction
 * (`payload.ledger`) and, once it is mined, books them with its receipt (`minedTxMovements`): what the ledger
 * books never depends on how the transaction's call is encoded.
 */
export type SentTxFacts = { kind: 'refund'; refund: RefundFacts } | { kind: 'settlement'; deposits: SettledDeposit[] };

const valuationJson = (valuation: Valuation | null): JsonValue =>
  valuation === null ? null : { amount: valuation.amount.toString(), usdMicros: valuation.usdMicros.toString() };

/** The facts as stored in the transaction's payload (bigints as decimal strings). */
export function sentTxFactsJson(facts: SentTxFacts): JsonObject {
  if (facts.kind === 'refund') {
    const { refund } = facts;
    return {
      kind: 'refund',
      requestId: refund.requestId,
      from: refund.from,
      currency: refund.currency,
      paid: refund.paid.toString(),
      depositAmount: refund.depositAmount.toString(),
      valuation: valuationJson(refund.valuation),
    };
  }
  return {
    kind: 'settlement',
    deposits: facts.deposits.map((deposit) => ({
      requestId: deposit.requestId,
      depositIndex: deposit.depositIndex.toString(),
      currency: deposit.currency,
      depositAmount: deposit.depositAmount.toString(),
      released: deposit.released.toString(),
      valuation: valuationJson(deposit.valuation),
    })),
  };
}

class Malformed extends Error {}

const field = (value: JsonValue | undefined, name: string): JsonValue => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Malformed(name);
  const found = value[name];
  if (found === undefined) throw new Malformed(name);
  return found;
};
const text = (value: JsonValue): string => {
  if (typeof value !== 'string') throw new Malformed('a string');
  return value;
};
const big = (value: JsonValue): bigint => BigInt(text(value));
const valuationOf = (value: JsonValue): Valuation | null =>
  value === null ? null : { amount: big(field(value, 'amount')), usdMicros: big(field(value, 'usdMicros')) };

/** The facts a transaction's payload stores (`sentTxFactsJson`), or null when it stores none. */
export function readSentTxFacts(payload: JsonObject, outgoingTxId: number): SentTxFacts | null {
  const stored = payload.ledger;
  if (stored === undefined || stored === null) return null;
  try {
    const kind = field(stored, 'kind');
    if (kind === 'refund') {
      const from = field(stored, 'from');
      if (from !== 'depository' && from !== 'solver') throw new Malformed('from');
      const requestId = field(stored, 'requestId');
      return {
        kind,
        refund: {
          requestId: requestId === null ? null : text(requestId),
          from,
          currency: text(field(stored, 'currency')),
          paid: big(field(stored, 'paid')),
          depositAmount: big(field(stored, 'depositAmount')),
          valuation: valuationOf(field(stored, 'valuation')),
        },
      };
    }
    if (kind === 'settlement') {
      const deposits = field(stored, 'deposits');
      if (!Array.isArray(deposits)) throw new Malformed('deposits');
      return {
        kind,
        deposits: deposits.map((deposit) => ({
          requestId: text(field(deposit, 'requestId')),
          depositIndex: big(field(deposit, 'depositIndex')),
          currency: text(field(deposit, 'currency')),
          depositAmount: big(field(deposit, 'depositAmount')),
          released: big(field(deposit, 'released')),
          valuation: valuationOf(field(deposit, 'valuation')),
        })),
      };
    }
    throw new Malformed('kind');
  } catch (error) {
    // Written by this module only: a payload it cannot read is a bug, never a ledger entry to guess.
    if (error instanceof Malformed)
      throw new Error(`outgoing tx ${outgoingTxId}: payload.ledger has no readable ${error.message}`, {
        cause: error,
      });
    throw error;
  }
}

/** A mined transaction's receipt, as the sender read it. */
export interface MinedReceipt {
  status: 'success' | 'reverted';
  hash: string;
  gasUsed: bigint;
  effectiveGasPrice: bigint;
  l1Fee?: bigint;
  /** The token transfers in and out of the sender's wallet (read for `rebalance` transactions). */
  tokenTransfers?: readonly SwapTransfer[];
}

/**
 * The movements a mined transaction books with its receipt: its gas (`gasSpent`, reverted or not) and, when it
 * succeeded, what its stored facts say it paid (a refund, a settlement's releases).
 */
export function minedTxMovements(
  tx: Pick<OutgoingTxRecord, 'id' | 'chainId' | 'requestId' | 'kind' | 'payload'> &
    Partial<Pick<OutgoingTxRecord, 'signer'>>,
  receipt: MinedReceipt,
  gasUsdMicros: bigint | null,
): LedgerMovement[] {
  const movements: LedgerMovement[] = [];
  const gas = gasSpent({
    chainId: tx.chainId,
    kind: tx.kind,
    requestId: tx.requestId,
    receipt,
    usdMicros: gasUsdMicros,
  });
  if (gas !== null) movements.push(gas);
  if (receipt.status !== 'success') return movements;
  const facts = readSentTxFacts(tx.payload, tx.id);
  if (facts?.kind === 'refund') movements.push(...refundPaid(tx.id, tx.chainId, facts.refund));
  if (facts?.kind === 'settlement') movements.push(...settlementPaid(tx.chainId, facts.deposits));
  if (tx.kind === 'rebalance' && tx.signer !== undefined)
    movements.push(...swappedBack(tx.chainId, tx.signer, receipt.hash, receipt.tokenTransfers ?? []));
  return movements;
}
