import { zeroAddress } from 'viem';
import { accounts, type LedgerMovement } from '../../store/ledgerMovements.js';
import { parseStoredFees, type StoredFees } from '../../store/storedFees.js';
import type { RequestRecord } from '../../records/request.js';

export { accounts, type LedgerAccount, type LedgerMovement, type MovementKind } from '../../store/ledgerMovements.js';

/**
 * The ledger's money rules: what each money event of the solver books, as pure functions of the typed facts the
 * solver holds when it happens (what a fill paid, what a refund paid back, what a receipt cost). Nothing here
 * reads a transaction's calldata: a refund's call may change shape without the ledger changing with it. The store
 * writes the movements in the transaction of the change that causes them (the request's status change, the
 * transaction's receipt, the deposit's confirmation), keyed so that writing one twice is a no-op.
 *
 * Double entry, per chain and currency, in smallest units: a movement debits one account (+amount) and credits
 * another (-amount), so every currency sums to zero. The accounts:
 *
 * - `solver`: the solver's wallet on a chain (its inventory).
 * - `depository`: deposits held by the depository contract; `depository:unallocated`: what partial releases
 *   (refund gas) left there for the solver.
 * - `counterparty`: the users. A deposit credits it (the gateway owes the user), fees, the exchange and the fill
 *   debit it; a completed request nets to zero in every currency, an unrefunded deposit stays owed.
 * - `trade`: the solver's position from exchanging one currency for another (credit in the input currency,
 *   debit in the currency that left the solver for the output).
 * - `revenue:execution`, `revenue:swap`, `revenue:platform`: fees earned, in the fee (input) currency;
 *   `revenue:refund`: the refund gas kept from a refunded deposit.
 * - `app:<wallet>`: app fees accrued to an `appFees` recipient, in the input currency (a liability).
 * - `sponsor`: what sponsors (API keys that subsidize fees) owe for the components they took over.
 * - `expense:gas`: native currency the solver spent on gas.
 * - `revenue:claim`: claim fees kept from app-fee claims, in the payout currency.
 * - `loss:reorg`: deposits the solver had already used (a fill paid, a refund sent) that a reorg past the
 *   confirmation depth then took off the chain: the depository (or the solver's wallet, for a deposit the
 *   receiver forwarded) never holds them.
 * - `equity:opening`: the other side of the opening balances: what the solver held on a chain when the ledger
 *   first followed it (`openingBalance`).
 */

/** A rate: `usdMicros` is the USD value of `amount` smallest units (the quote's valuation of its input). */
export interface Valuation {
  amount: bigint;
  usdMicros: bigint;
}

/** What the movements read of a request: its id, its input and the fees (with their USD values) it was quoted. */
export interface QuotedRequest {
  id: string;
  input: { chainId: number; currency: string; amount: bigint };
  fees: StoredFees | null;
}

export const quotedRequestOf = (request: RequestRecord): QuotedRequest => ({
  id: request.id,
  input: {
    chainId: request.originChainId,
    currency: request.originCurrency.toLowerCase(),
    amount: request.amountIn,
  },
  fees: parseStoredFees(request.feesQuoted),
});

/**
 * The rate at which `request` values an amount of `currency` on `chainId`: the quote's input price when that is its
 * input currency, else none.
 */
export function inputValuation(
  request: QuotedRequest | undefined,
  chainId: number,
  currency: string,
): Valuation | null {
  if (request === undefined || request.fees === null) return null;
  if (request.input.chainId !== chainId || request.input.currency !== currency.toLowerCase()) return null;
  return { amount: request.input.amount, usdMicros: request.fees.usdMicros.in };
}

/** USD of `amount` at `valuation`, or null. */
export function valued(amount: bigint, valuation: Valuation | null): bigint | null {
  if (valuation === null || valuation.amount <= 0n) return null;
  return (amount * valuation.usdMicros) / valuation.amount;
}

/** A confirmed deposit, as the movements read it (a `DepositRecord`). */
export interface ReceivedDeposit {
  chainId: number;
  txHash: string;
  logIndex: number;
  /** Token address; the zero address for native deposits. */
  token: string;
  amount: bigint;
  /** Null for a deposit the receiver forwarded to the solver's wallet. */
  depositIndex: bigint | null;
}

/**
 * A confirmed deposit: its amount enters the depository (or, forwarded by the receiver, the solver's wallet)
 * and is owed to the user until the request is filled or refunded. Valued at the quote's input price when the
 * deposit pays a known request in its own currency.
 */
export function depositReceived(deposit: ReceivedDeposit, request: QuotedRequest | undefined): LedgerMovement {
  return {
    key: `deposit:${deposit.chainId}:${deposit.txHash.toLowerCase()}:${deposit.logIndex}`,
    kind: 'deposit_received',
    chainId: deposit.chainId,
    currency: deposit.token.toLowerCase(),
    amount: deposit.amount,
    debit: deposit.depositIndex === null ? accounts.solver : accounts.depository,
    credit: accounts.counterparty,
    usdMicros: valued(deposit.amount, inputValuation(request, deposit.chainId, deposit.token)),
    requestId: request?.id ?? null,
  };
}

/**
 * A used deposit a reorg took off the chain: what its receipt put into the depository (or the solver's wallet) is
 * not there, and the solver bears it (`loss:reorg`), valued as its receipt was. Keyed by the deposit's log, so it is
 * booked once.
 */
export function depositLost(deposit: ReceivedDeposit, request: QuotedRequest | undefined): LedgerMovement {
  const received = depositReceived(deposit, request);
  return {
    ...received,
    key: `deposit-lost:${deposit.chainId}:${deposit.txHash.toLowerCase()}:${deposit.logIndex}`,
    kind: 'deposit_lost',
    debit: accounts.reorgLoss,
    credit: received.debit,
  };
}

/** `depositReceived` and `depositLost` of a stored deposit and its request, as the store hands them over. */
export const depositRules = {
  received: (deposit: ReceivedDeposit, request: RequestRecord | undefined) =>
    depositReceived(deposit, request === undefined ? undefined : quotedRequestOf(request)),
  lost: (deposit: ReceivedDeposit, request: RequestRecord | undefined) =>
    depositLost(deposit, request === undefined ? undefined : quotedRequestOf(request)),
};

/** One amount on one chain in one currency (the token address; the zero address for native). */
export interface ChainAmount {
  chainId: number;
  currency: string;
  amount: bigint;
}

/**
 * What a successful fill did, as the solver knows it when it sends the fill: the request it filled (its input and
 * quoted fees), what left the solver's wallet for the output and to whom, and the native gas top-up it sent the
 * recipient. `paid` is what left the solver, not what the recipient got: a fill that swaps through a DEX names the
 * inventory token it spent.
 */
export interface FillFacts {
  request: QuotedRequest;
  paid: ChainAmount & {
    /** Whom the fill paid: the recipient, or the public multicaller that runs the user's calls. */
    to: string;
  };
  /**
   * Native gas sent to the recipient besides the output (`topupGas`), smallest units; 0 for none. Its value is
   * charged in the execution fee; the native that left the solver is booked as a second exchange and payout.
   */
  gasTopup: bigint;
}

/**
 * A request filled (`success`): the fees it paid (each kind to its revenue account, each app fee to its
 * recipient), the sponsor's share, the exchange of the rest of the input for what left the solver, and that
 * payment from the solver's wallet on the destination.
 */
export function requestFilled(fill: FillFacts): LedgerMovement[] {
  const { request, paid } = fill;
  const fees = request.fees;
  const input = { chainId: request.input.chainId, currency: request.input.currency.toLowerCase() };
  const output = { chainId: paid.chainId, currency: paid.currency.toLowerCase() };
  const movements: LedgerMovement[] = [];
  const add = (movement: Omit<LedgerMovement, 'requestId'>) => {
    if (movement.amount > 0n) movements.push({ ...movement, requestId: request.id });
  };
  let userPaid = 0n;
  if (fees !== null) {
    movements.push(...feeMovements(request.id, fees));
    const feeAt = { chainId: fees.currency.chainId, currency: fees.currency.address.toLowerCase() };
    if (feeAt.chainId === input.chainId && feeAt.currency === input.currency) {
      userPaid = fees.execution + fees.swap + fees.platform + fees.app - fees.sponsored;
    }
  }
  const exchanged = request.input.amount - userPaid;
  const inputRate = fees === null ? null : { amount: request.input.amount, usdMicros: fees.usdMicros.in };
  add({
    key: `${request.id}:exchange:in`,
    kind: 'exchange',
    ...input,
    amount: exchanged,
    debit: accounts.counterparty,
    credit: accounts.trade,
    usdMicros: valued(exchanged, inputRate),
  });
  const outUsd = fees?.usdMicros.out ?? null;
  add({
    key: `${request.id}:exchange:out`,
    kind: 'exchange',
    ...output,
    amount: paid.amount,
    debit: accounts.trade,
    credit: accounts.counterparty,
    usdMicros: outUsd,
  });
  add({
    key: `${request.id}:fill`,
    kind: 'fill_paid',
    ...output,
    amount: paid.amount,
    debit: accounts.counterparty,
    credit: accounts.solver,
    usdMicros: outUsd,
  });
  // The top-up is the destination's native currency, sent in the same transaction: its own exchange and payout.
  const native = { chainId: paid.chainId, currency: NATIVE_CURRENCY };
  add({
    key: `${request.id}:topup:exchange:out`,
    kind: 'exchange',
    ...native,
    amount: fill.gasTopup,
    debit: accounts.trade,
    credit: accounts.counterparty,
    usdMicros: null,
  });
  add({
    key: `${request.id}:topup`,
    kind: 'fill_paid',
    ...native,
    amount: fill.gasTopup,
    debit: accounts.counterparty,
    credit: accounts.solver,
    usdMicros: null,
  });
  return movements;
}

/** The ledger's currency for a chain's native coin. */
const NATIVE_CURRENCY = '0x0000000000000000000000000000000000000000';

/** The fees a filled request paid: each kind to its revenue account, each app fee to its recipient, the sponsor's. */
function feeMovements(requestId: string, fees: StoredFees): LedgerMovement[] {
  const feeAt = { chainId: fees.currency.chainId, currency: fees.currency.address.toLowerCase(), requestId };
  const movements: LedgerMovement[] = [];
  for (const kind of ['execution', 'swap', 'platform'] as const) {
    movements.push({
      key: `${requestId}:fee:${kind}`,
      kind: 'fee_earned',
      ...feeAt,
      amount: fees[kind],
      debit: accounts.counterparty,
      credit: accounts.revenue(kind),
      usdMicros: fees.usdMicros[kind],
    });
  }
  const appRate = { amount: fees.app, usdMicros: fees.usdMicros.app };
  for (const app of fees.appFees) {
    movements.push({
      key: `${requestId}:app-fee:${app.recipient.toLowerCase()}`,
      kind: 'app_fee_accrued',
      ...feeAt,
      amount: app.amount,
      debit: accounts.counterparty,
      credit: accounts.app(app.recipient),
      usdMicros: valued(app.amount, appRate),
    });
  }
  movements.push({
    key: `${requestId}:sponsored`,
    kind: 'sponsored',
    ...feeAt,
    amount: fees.sponsored,
    debit: accounts.sponsor,
    credit: accounts.counterparty,
    usdMicros: fees.usdMicros.sponsored,
  });
  return movements.filter((movement) => movement.amount > 0n);
}

/** What a mined transaction cost in gas (its receipt), and what it was sent for. */
export interface GasFacts {
  chainId: number;
  /** The outgoing transaction's kind and key (`outgoing_txs.kind`, `request_id`). */
  kind: string;
  requestId: string;
  receipt: { hash: string; gasUsed: bigint; effectiveGasPrice: bigint; l1Fee?: bigint };
  /** The gas's USD value when it was mined, or null when no price was at hand. */
  usdMicros: bigint | null;
}

/**
 * A mined transaction's gas, paid in the native currency from the solver's wallet: `gasUsed * effectiveGasPrice`,
 * plus the L1 data fee an OP-stack receipt reports (`l1Fee`), which the chain takes from the sender's balance too.
 */
export function gasSpent(gas: GasFacts): LedgerMovement | null {
  const { receipt } = gas;
  const amount = receipt.gasUsed * receipt.effectiveGasPrice + (receipt.l1Fee ?? 0n);
  if (amount <= 0n) return null;
  return {
    key: `gas:${gas.chainId}:${receipt.hash.toLowerCase()}`,
    kind: 'gas_spent',
    chainId: gas.chainId,
    currency: zeroAddress,
    amount,
    debit: accounts.gas,
    credit: accounts.solver,
    usdMicros: gas.usdMicros,
    // Gas spent for one request (its fill, refund, or the origin deposit the gateway sent for it: permit deposits
    // and gasless batches, a reverted one included) names it.
    requestId: ['fill', 'refund', 'deposit', 'gasless'].includes(gas.kind) ? gas.requestId : null,
  };
}

/**
 * What a refund pays back, as the solver knows it when it sends the refund: from the depository (a `release` of
 * `depositAmount`, paying `paid` and leaving the rest, the refund's gas, unallocated for the solver) or from the
 * solver's wallet (a deposit the receiver forwarded, paid back in native).
 */
export interface RefundFacts {
  /** The request paid back; null for a deposit that names none the gateway knows. */
  requestId: string | null;
  from: 'depository' | 'solver';
  /** Token address, or the zero address for native. */
  currency: string;
  /** What the user gets back, smallest units. */
  paid: bigint;
  /** The deposit the depository releases (`from: 'depository'`); what it does not pay back is kept. */
  depositAmount: bigint;
  /** The request's valuation of `currency` (its quote's input price), or null. */
  valuation: Valuation | null;
}

/** A refund transaction that succeeded (`outgoingTxId` on `chainId`), booked from its facts. */
export function refundPaid(outgoingTxId: number, chainId: number, refund: RefundFacts): LedgerMovement[] {
  const currency = refund.currency.toLowerCase();
  const base = { chainId, currency, requestId: refund.requestId };
  const value = (amount: bigint) => valued(amount, refund.valuation);
  const movements: LedgerMovement[] = [];
  if (refund.paid > 0n) {
    movements.push({
      ...base,
      key: `refund:${outgoingTxId}`,
      kind: 'refund_paid',
      amount: refund.paid,
      debit: accounts.counterparty,
      credit: refund.from === 'solver' ? accounts.solver : accounts.depository,
      usdMicros: value(refund.paid),
    });
  }
  const kept = refund.from === 'depository' ? refund.depositAmount - refund.paid : 0n;
  if (kept > 0n) {
    // The refund's gas, kept from the deposit: the user pays it (a refund fee), and it stays in the depository
    // as `unallocated`, the solver's to withdraw.
    movements.push({
      ...base,
      key: `refund:${outgoingTxId}:fee`,
      kind: 'fee_earned',
      amount: kept,
      debit: accounts.counterparty,
      credit: accounts.revenue('refund'),
      usdMicros: value(kept),
    });
    movements.push({
      ...base,
      key: `refund:${outgoingTxId}:kept`,
      kind: 'refund_kept',
      amount: kept,
      debit: accounts.depositoryUnallocated,
      credit: accounts.depository,
      usdMicros: value(kept),
    });
  }
  return movements;
}

/** One deposit a settlement batch releases to the solver, as the settler knows it when it sends the batch. */
export interface SettledDeposit {
  /** The request the deposit paid (as the deposit names it). */
  requestId: string;
  depositIndex: bigint;
  currency: string;
  depositAmount: bigint;
  /** Released to the solver's wallet; what is not stays unallocated in the depository. */
  released: bigint;
  /** The request's valuation of `currency`, or null (no such request, or another currency). */
  valuation: Valuation | null;
}

/**
 * A settlement batch that succeeded on `chainId`: each released deposit leaves the depository for the solver's
 * wallet (what a release leaves behind, none when settled in full, stays as `unallocated`). Keyed by the deposit's
 * index, so a deposit is settled in the ledger at most once, as on chain.
 */
export function settlementPaid(chainId: number, deposits: readonly SettledDeposit[]): LedgerMovement[] {
  return deposits.flatMap((deposit) => {
    const currency = deposit.currency.toLowerCase();
    const base = { kind: 'settlement' as const, chainId, currency, requestId: deposit.requestId.toLowerCase() };
    const movements: LedgerMovement[] = [];
    if (deposit.released > 0n) {
      movements.push({
        ...base,
        key: `settle:${chainId}:${deposit.depositIndex}`,
        amount: deposit.released,
        debit: accounts.solver,
        credit: accounts.depository,
        usdMicros: valued(deposit.released, deposit.valuation),
      });
    }
    const kept = deposit.depositAmount - deposit.released;
    if (kept > 0n) {
      movements.push({
        ...base,
        key: `settle:${chainId}:${deposit.depositIndex}:kept`,
        amount: kept,
        debit: accounts.depositoryUnallocated,
        credit: accounts.depository,
        usdMicros: valued(kept, deposit.valuation),
      });
    }
    return movements;
  });
}

/** What `claimPaid` needs of a claim (`src/store/appFeeClaims.repository.ts`). */
export interface PaidClaim {
  id: string;
  wallet: string;
  chainId: number;
  currency: string;
  /** Taken from the wallet's balance, micro-USD (the fee included). */
  usdMicros: bigint;
  feeUsdMicros: bigint;
  /** Paid to the recipient, smallest units of `currency`. */
  amount: bigint;
}

/** What an app wallet is owed in one currency, with its USD value at fill time (`accountOwed`). */
export interface OwedBalance {
  chainId: number;
  currency: string;
  amount: bigint;
  usdMicros: bigint;
}

/**
 * An app-fee claim paid on chain. The wallet's balance (`app:<wallet>`, held in the currencies the fees were paid
 * in, each with its USD value at fill time) gives up `usdMicros` of value, currency by currency in the order given,
 * each at its own accrued rate; the solver exchanges that for the payout (`trade`), pays the recipient from its
 * wallet on the claim's chain, and keeps the claim fee (`revenue:claim`, valued in the payout currency at the
 * claim's rate). Keyed by the claim id, so a claim enters the ledger once.
 */
export function claimPaid(claim: PaidClaim, owed: readonly OwedBalance[]): LedgerMovement[] {
  const movements: LedgerMovement[] = [];
  const base = { requestId: claim.id };
  let remaining = claim.usdMicros;
  for (const held of owed) {
    if (remaining <= 0n) break;
    if (held.amount <= 0n || held.usdMicros <= 0n) continue;
    const takenUsd = held.usdMicros < remaining ? held.usdMicros : remaining;
    const amount = takenUsd === held.usdMicros ? held.amount : (held.amount * takenUsd) / held.usdMicros;
    remaining -= takenUsd;
    if (amount <= 0n) continue;
    movements.push({
      ...base,
      key: `claim:${claim.id}:${held.chainId}:${held.currency}`,
      kind: 'app_fee_claimed',
      chainId: held.chainId,
      currency: held.currency,
      amount,
      debit: accounts.app(claim.wallet),
      credit: accounts.trade,
      usdMicros: takenUsd,
    });
  }
  const payout = { chainId: claim.chainId, currency: claim.currency.toLowerCase() };
  const paidUsd = claim.usdMicros - claim.feeUsdMicros;
  if (claim.amount > 0n)
    movements.push({
      ...base,
      ...payout,
      key: `claim:${claim.id}:paid`,
      kind: 'claim_paid',
      amount: claim.amount,
      debit: accounts.trade,
      credit: accounts.solver,
      usdMicros: paidUsd,
    });
  if (claim.feeUsdMicros > 0n && paidUsd > 0n) {
    // The fee in the payout currency at the rate the payout was priced at.
    const fee = (claim.amount * claim.feeUsdMicros) / paidUsd;
    if (fee > 0n)
      movements.push({
        ...base,
        ...payout,
        key: `claim:${claim.id}:fee`,
        kind: 'fee_earned',
        amount: fee,
        debit: accounts.trade,
        credit: accounts.revenue('claim'),
        usdMicros: claim.feeUsdMicros,
      });
  }
  return movements;
}

/**
 * The opening balance of the solver's wallet on a chain in a currency: what the chain held that the ledger did
 * not know of when the reconciliation job first compared them (`reconciler.ts`), against `equity:opening`.
 * `difference` is signed (on chain less the ledger); a negative one credits the solver. Keyed by the chain's
 * genesis hash, so it is written once per chain (a devnet reset, a new genesis, opens again), and written even
 * when 0, so the opening is taken once.
 */
export function openingBalance(params: {
  chainId: number;
  currency: string;
  genesisHash: string;
  difference: bigint;
  usdMicros: bigint | null;
}): LedgerMovement {
  const negative = params.difference < 0n;
  const usd = params.usdMicros === null ? null : params.usdMicros < 0n ? -params.usdMicros : params.usdMicros;
  return {
    key: openingKey(params.chainId, params.currency, params.genesisHash),
    kind: 'opening',
    chainId: params.chainId,
    currency: params.currency.toLowerCase(),
    amount: negative ? -params.difference : params.difference,
    debit: negative ? accounts.opening : accounts.solver,
    credit: negative ? accounts.solver : accounts.opening,
    usdMicros: usd,
    requestId: null,
  };
}

/** The movement key of a chain's opening balance in a currency (one per chain genesis). */
export const openingKey = (chainId: number, currency: string, genesisHash: string): string =>
  `opening:${chainId}:${currency.toLowerCase()}:${genesisHash.toLowerCase()}`;

/** One token transfer in or out of the solver's wallet in a mined transaction (its receipt's `Transfer` logs). */
export interface SwapTransfer {
  token: string;
  from: string;
  to: string;
  amount: bigint;
  logIndex: number;
}

/**
 * A swap of the solver's own inventory through the pools (the rebalancing job's swap back of a surplus), sent by
 * `wallet`: every token the receipt shows leaving the wallet moves to `trade`, every token entering it comes from
 * `trade`; keyed by the transaction and log, so a receipt read twice books once.
 */
export function swappedBack(
  chainId: number,
  wallet: string,
  hash: string,
  transfers: readonly SwapTransfer[],
): LedgerMovement[] {
  const own = wallet.toLowerCase();
  return transfers.flatMap((transfer): LedgerMovement[] => {
    const leaving = transfer.from.toLowerCase() === own;
    const entering = transfer.to.toLowerCase() === own;
    if (transfer.amount <= 0n || leaving === entering) return [];
    return [
      {
        key: `swap-back:${chainId}:${hash.toLowerCase()}:${transfer.logIndex}`,
        kind: 'swap_back',
        chainId,
        currency: transfer.token.toLowerCase(),
        amount: transfer.amount,
        debit: leaving ? accounts.trade : accounts.solver,
        credit: leaving ? accounts.solver : accounts.trade,
        usdMicros: null,
        requestId: null,
      },
    ];
  });
}
