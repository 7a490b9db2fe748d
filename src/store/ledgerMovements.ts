import { decodeFunctionData, zeroAddress, type Hex } from 'viem';
import { depositoryReleaseAbi } from './depositoryReleases.js';
import type { RequestRecord } from './requestRecord.js';
import { parseStoredFees } from './storedFees.js';
import type { JsonObject } from './tables.js';

/**
 * The ledger's movements: what each money event of the solver writes, as pure functions of the records whose
 * status change causes it. The store writes them in the same transaction as that change (see
 * `ledger.repository.ts`), keyed so that writing one twice is a no-op; so they live here, below the core, which
 * reads the accounts and writes the opening balances.
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
 *   debit in the output currency).
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
export type LedgerAccount = string;

export const accounts = {
  solver: 'solver',
  depository: 'depository',
  depositoryUnallocated: 'depository:unallocated',
  counterparty: 'counterparty',
  trade: 'trade',
  sponsor: 'sponsor',
  gas: 'expense:gas',
  opening: 'equity:opening',
  reorgLoss: 'loss:reorg',
  revenue: (kind: 'execution' | 'swap' | 'platform' | 'refund' | 'claim') => `revenue:${kind}`,
  app: (wallet: string) => `app:${wallet.toLowerCase()}`,
} as const;

export type MovementKind =
  | 'deposit_received'
  | 'deposit_lost'
  | 'fill_paid'
  | 'exchange'
  | 'fee_earned'
  | 'app_fee_accrued'
  | 'sponsored'
  | 'refund_paid'
  | 'refund_kept'
  | 'gas_spent'
  | 'settlement'
  | 'app_fee_claimed'
  | 'claim_paid'
  | 'opening';

/** One movement: `amount` moves into `debit` from `credit`, on one chain in one currency. */
export interface LedgerMovement {
  /** Unique per movement: the same event always produces the same key. */
  key: string;
  kind: MovementKind;
  chainId: number;
  /** Token address, lower case; the zero address for the native currency. */
  currency: string;
  /** Smallest units, > 0 (an `opening` may be 0: it still records that the opening was taken). */
  amount: bigint;
  debit: LedgerAccount;
  credit: LedgerAccount;
  /** USD value when recorded (micro-USD), or null when no price was at hand. */
  usdMicros: bigint | null;
  requestId: string | null;
}

/**
 * What the movements read of a deposit: a `DepositRecord` (`deposits.repository.ts`), which writes them and so is
 * not imported here.
 */
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

/** What the movements read of a mined transaction: an `OutgoingTxRecord` (`outgoingTxs.repository.ts`). */
export interface MinedTx {
  id: number;
  chainId: number;
  requestId: string;
  kind: string;
  /** The transaction as built (to, data, value). */
  payload: JsonObject;
}

/** USD of `amount` at the rate of `usd` for `reference` units (the quote's own valuation), or null. */
function usdAt(amount: bigint, reference: bigint, usd: bigint | undefined): bigint | null {
  if (usd === undefined || reference <= 0n) return null;
  return (amount * usd) / reference;
}

/**
 * A confirmed deposit: its amount enters the depository (or, forwarded by the receiver, the solver's wallet)
 * and is owed to the user until the request is filled or refunded. Valued at the quote's input price when the
 * deposit pays a known request in its own currency.
 */
export function depositReceived(deposit: ReceivedDeposit, request: RequestRecord | undefined): LedgerMovement {
  const fees = request === undefined ? null : parseStoredFees(request.feesQuoted);
  const sameCurrency =
    request !== undefined &&
    request.originChainId === deposit.chainId &&
    request.originCurrency.toLowerCase() === deposit.token.toLowerCase();
  return {
    key: `deposit:${deposit.chainId}:${deposit.txHash.toLowerCase()}:${deposit.logIndex}`,
    kind: 'deposit_received',
    chainId: deposit.chainId,
    currency: deposit.token.toLowerCase(),
    amount: deposit.amount,
    debit: deposit.depositIndex === null ? accounts.solver : accounts.depository,
    credit: accounts.counterparty,
    usdMicros: sameCurrency ? usdAt(deposit.amount, request.amountIn, fees?.usdMicros.in) : null,
    requestId: request?.id ?? null,
  };
}

/**
 * A used deposit a reorg took off the chain: what its receipt put into the depository (or the solver's wallet) is
 * not there, and the solver bears it (`loss:reorg`), valued as its receipt was. Keyed by the deposit's log, so it is
 * booked once.
 */
export function depositLost(deposit: ReceivedDeposit, request: RequestRecord | undefined): LedgerMovement {
  const received = depositReceived(deposit, request);
  return {
    ...received,
    key: `deposit-lost:${deposit.chainId}:${deposit.txHash.toLowerCase()}:${deposit.logIndex}`,
    kind: 'deposit_lost',
    debit: accounts.reorgLoss,
    credit: received.debit,
  };
}

/**
 * A request filled (`success`): the fees it paid (each kind to its revenue account, each app fee to its
 * recipient), the sponsor's share, the exchange of the rest of the input for the output, and the output paid
 * from the solver's wallet on the destination.
 */
export function requestFilled(request: RequestRecord): LedgerMovement[] {
  const fees = parseStoredFees(request.feesQuoted);
  const origin = { chainId: request.originChainId, currency: request.originCurrency.toLowerCase() };
  // What left the solver on the destination: the output, or the currency a DEX leg spent to buy it
  // (`quote.dex.destination`: the recipient got the pool's output, the solver paid its entry currency).
  const leg = destinationLeg(request.quote);
  const destination = {
    chainId: request.destinationChainId,
    currency: leg?.currency ?? request.destinationCurrency.toLowerCase(),
  };
  const paidOut = leg?.amount ?? request.amountOut;
  const movements: LedgerMovement[] = [];
  const add = (movement: Omit<LedgerMovement, 'requestId'>) => {
    if (movement.amount > 0n) movements.push({ ...movement, requestId: request.id });
  };
  let userPaid = 0n;
  if (fees !== null) {
    const feeAt = { chainId: fees.currency.chainId, currency: fees.currency.address.toLowerCase() };
    for (const kind of ['execution', 'swap', 'platform'] as const) {
      add({
        key: `${request.id}:fee:${kind}`,
        kind: 'fee_earned',
        ...feeAt,
        amount: fees[kind],
        debit: accounts.counterparty,
        credit: accounts.revenue(kind),
        usdMicros: fees.usdMicros[kind],
      });
    }
    for (const app of fees.appFees) {
      add({
        key: `${request.id}:app-fee:${app.recipient.toLowerCase()}`,
        kind: 'app_fee_accrued',
        ...feeAt,
        amount: app.amount,
        debit: accounts.counterparty,
        credit: accounts.app(app.recipient),
        usdMicros: usdAt(app.amount, fees.app, fees.usdMicros.app),
      });
    }
    add({
      key: `${request.id}:sponsored`,
      kind: 'sponsored',
      ...feeAt,
      amount: fees.sponsored,
      debit: accounts.sponsor,
      credit: accounts.counterparty,
      usdMicros: fees.usdMicros.sponsored,
    });
    if (feeAt.chainId === origin.chainId && feeAt.currency === origin.currency) {
      userPaid = fees.execution + fees.swap + fees.platform + fees.app - fees.sponsored;
    }
  }
  const exchanged = request.amountIn - userPaid;
  add({
    key: `${request.id}:exchange:in`,
    kind: 'exchange',
    ...origin,
    amount: exchanged,
    debit: accounts.counterparty,
    credit: accounts.trade,
    usdMicros: usdAt(exchanged, request.amountIn, fees?.usdMicros.in),
  });
  const outUsd = fees?.usdMicros.out;
  add({
    key: `${request.id}:exchange:out`,
    kind: 'exchange',
    ...destination,
    amount: paidOut,
    debit: accounts.trade,
    credit: accounts.counterparty,
    usdMicros: outUsd ?? null,
  });
  add({
    key: `${request.id}:fill`,
    kind: 'fill_paid',
    ...destination,
    amount: paidOut,
    debit: accounts.counterparty,
    credit: accounts.solver,
    usdMicros: outUsd ?? null,
  });
  return movements;
}

/** The entry currency (lower case; zero for native) and amount a request's destination DEX leg spends. */
function destinationLeg(quote: JsonObject | null): { currency: string; amount: bigint } | undefined {
  const leg = ((quote?.dex as JsonObject | undefined)?.destination ?? undefined) as JsonObject | undefined;
  if (leg === undefined || typeof leg.amountIn !== 'string' || typeof leg.tokenIn !== 'string') return undefined;
  return { currency: leg.nativeIn === true ? zeroAddress : leg.tokenIn.toLowerCase(), amount: BigInt(leg.amountIn) };
}

/**
 * A mined transaction's gas, paid in the native currency from the solver's wallet: `gasUsed * effectiveGasPrice`,
 * plus the L1 data fee an OP-stack receipt reports (`l1Fee`), which the chain takes from the sender's balance too.
 */
export function gasSpent(
  tx: MinedTx,
  receipt: { hash: string; gasUsed: bigint; effectiveGasPrice: bigint; l1Fee?: bigint },
  usdMicros: bigint | null = null,
): LedgerMovement | null {
  const amount = receipt.gasUsed * receipt.effectiveGasPrice + (receipt.l1Fee ?? 0n);
  if (amount <= 0n) return null;
  return {
    key: `gas:${tx.chainId}:${receipt.hash.toLowerCase()}`,
    kind: 'gas_spent',
    chainId: tx.chainId,
    currency: zeroAddress,
    amount,
    debit: accounts.gas,
    credit: accounts.solver,
    usdMicros,
    // Gas spent for one request (its fill, refund, or the origin deposit the gateway sent for it: permit deposits
    // and gasless batches, a reverted one included) names it.
    requestId: ['fill', 'refund', 'deposit', 'gasless'].includes(tx.kind) ? tx.requestId : null,
  };
}

/**
 * The request a refund transaction pays back: the one a depository `release` names (a refund keyed by its deposit,
 * such as a second deposit to a request already paid, names its request there), else the transaction's own key.
 */
export function refundedRequestId(tx: MinedTx): string {
  const data = ((tx.payload as { data?: string }).data ?? '0x') as Hex;
  if (data === '0x') return tx.requestId;
  const { functionName, args } = decodeFunctionData({ abi: depositoryReleaseAbi, data });
  return functionName === 'release' ? args[1].toLowerCase() : tx.requestId;
}

/**
 * A refund transaction that succeeded: a depository `release` pays `amount` of the deposit back and leaves the
 * rest (the refund's gas) unallocated for the solver; a plain transfer (a deposit the receiver forwarded) pays
 * the native value from the solver's wallet. `request` values it at the quote's input price when it matches.
 */
export function refundPaid(tx: MinedTx, request: RequestRecord | undefined): LedgerMovement[] {
  const payload = tx.payload as { to?: string; data?: string; value?: string };
  const data = (payload.data ?? '0x') as Hex;
  const base = { chainId: tx.chainId, requestId: request?.id ?? null };
  const fees = request === undefined ? null : parseStoredFees(request.feesQuoted);
  const value = (currency: string, amount: bigint) =>
    request !== undefined && request.originChainId === tx.chainId && request.originCurrency.toLowerCase() === currency
      ? usdAt(amount, request.amountIn, fees?.usdMicros.in)
      : null;
  if (data === '0x') {
    const amount = BigInt(payload.value ?? '0');
    if (amount <= 0n) return [];
    return [
      {
        ...base,
        key: `refund:${tx.id}`,
        kind: 'refund_paid',
        currency: zeroAddress,
        amount,
        debit: accounts.counterparty,
        credit: accounts.solver,
        usdMicros: value(zeroAddress, amount),
      },
    ];
  }
  const { functionName, args } = decodeFunctionData({ abi: depositoryReleaseAbi, data });
  if (functionName !== 'release') return [];
  const [, , , token, depositAmount, , amount] = args;
  const currency = token.toLowerCase();
  const movements: LedgerMovement[] = [];
  if (amount > 0n) {
    movements.push({
      ...base,
      key: `refund:${tx.id}`,
      kind: 'refund_paid',
      currency,
      amount,
      debit: accounts.counterparty,
      credit: accounts.depository,
      usdMicros: value(currency, amount),
    });
  }
  const kept = depositAmount - amount;
  if (kept > 0n) {
    // The refund's gas, kept from the deposit: the user pays it (a refund fee), and it stays in the depository
    // as `unallocated`, the solver's to withdraw.
    movements.push({
      ...base,
      key: `refund:${tx.id}:fee`,
      kind: 'fee_earned',
      currency,
      amount: kept,
      debit: accounts.counterparty,
      credit: accounts.revenue('refund'),
      usdMicros: value(currency, kept),
    });
    movements.push({
      ...base,
      key: `refund:${tx.id}:kept`,
      kind: 'refund_kept',
      currency,
      amount: kept,
      debit: accounts.depositoryUnallocated,
      credit: accounts.depository,
      usdMicros: value(currency, kept),
    });
  }
  return movements;
}

/** The request ids a settlement batch releases deposits of (`settlementPaid` values them by their requests). */
export function settledRequestIds(tx: MinedTx): string[] {
  const payload = tx.payload as { data?: string };
  const { functionName, args } = decodeFunctionData({ abi: depositoryReleaseAbi, data: (payload.data ?? '0x') as Hex });
  if (functionName !== 'releaseBatch') return [];
  return [...new Set(args[0].map((release) => release.id.toLowerCase()))];
}

/**
 * A settlement batch that succeeded: each released deposit leaves the depository for the solver's wallet (what
 * a release leaves behind, none when settled in full, stays as `unallocated`). Keyed by the deposit's index, so
 * a deposit is settled in the ledger at most once, as on chain. Valued like the deposit and the request it
 * paid: at the quote's input price (`requests`, by id), when the deposit is in the request's input currency.
 */
export function settlementPaid(
  tx: MinedTx,
  requests: ReadonlyMap<string, RequestRecord> = new Map(),
): LedgerMovement[] {
  const payload = tx.payload as { data?: string };
  const { functionName, args } = decodeFunctionData({ abi: depositoryReleaseAbi, data: (payload.data ?? '0x') as Hex });
  if (functionName !== 'releaseBatch') return [];
  return args[0].flatMap((release) => {
    const currency = release.token.toLowerCase();
    const requestId = release.id.toLowerCase();
    const request = requests.get(requestId);
    const inputUsd =
      request !== undefined && request.originChainId === tx.chainId && request.originCurrency.toLowerCase() === currency
        ? parseStoredFees(request.feesQuoted)?.usdMicros.in
        : undefined;
    const value = (amount: bigint) => (request === undefined ? null : usdAt(amount, request.amountIn, inputUsd));
    const base = { kind: 'settlement' as const, chainId: tx.chainId, currency, requestId };
    const movements: LedgerMovement[] = [];
    if (release.amount > 0n) {
      movements.push({
        ...base,
        key: `settle:${tx.chainId}:${release.depositIndex}`,
        amount: release.amount,
        debit: accounts.solver,
        credit: accounts.depository,
        usdMicros: value(release.amount),
      });
    }
    const kept = release.depositAmount - release.amount;
    if (kept > 0n) {
      movements.push({
        ...base,
        key: `settle:${tx.chainId}:${release.depositIndex}:kept`,
        amount: kept,
        debit: accounts.depositoryUnallocated,
        credit: accounts.depository,
        usdMicros: value(kept),
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

/**
 * An app-fee claim paid on chain. The wallet's balance (`app:<wallet>`, held in the currencies the fees were paid
 * in, each with its USD value at fill time) gives up `usdMicros` of value, currency by currency in the order given,
 * each at its own accrued rate; the solver exchanges that for the payout (`trade`), pays the recipient from its
 * wallet on the claim's chain, and keeps the claim fee (`revenue:claim`, valued in the payout currency at the
 * claim's rate). Keyed by the claim id, so a claim enters the ledger once.
 */
export function claimPaid(
  claim: PaidClaim,
  owed: ReadonlyArray<{ chainId: number; currency: string; amount: bigint; usdMicros: bigint }>,
): LedgerMovement[] {
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
 * not know of when the reconciliation job first compared them (`src/core/ledger/reconciler.ts`), against
 * `equity:opening`. `difference` is signed (on chain less the ledger); a negative one credits the solver. Keyed by
 * the chain's genesis hash, so it is written once per chain (a devnet reset, a new genesis, opens again), and
 * written even when 0, so the opening is taken once.
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
