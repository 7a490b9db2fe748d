import {
  encodeAbiParameters,
  encodeFunctionData,
  keccak256,
  parseAbiParameters,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import type { Kysely } from 'kysely';
import { getDeposit, listDepositsForRequest, updateDepositStatus } from '../../store/deposits.repository.js';
import type { DepositRecord } from '../../records/deposit.js';
import { getLiveOutgoingTx } from '../../store/outgoingTxs.repository.js';
import type { RequestRecord } from '../../records/request.js';
import { appendRequestTxHash, getRequest, recordRequestFailReason } from '../../store/requests.repository.js';
import type { JsonObject } from '../../records/json.js';
import type { Tables } from '../../store/tables.js';
import { depositoryAbi } from '../abi.js';
import { requireChain, requireCurrency } from '../chains/requireChain.js';
import type { ChainConfig, CurrencyConfig } from '../chains/types.js';
import { withGasMargin } from '../gasMargin.js';
import { inputValuation, quotedRequestOf, type RefundFacts } from '../ledger/movements.js';
import { convert } from '../market.js';
import type { FailReason } from '../vocabulary/statusMachine.js';
import { callsOf } from './requestCalls.js';
import type { SentReceipt } from '../ports/solver.js';
import type { SolverScope } from './scope.js';
import { fillFactsOf } from './fillFacts.js';
import { setStatus } from './setStatus.js';
import { representativeTxBytes } from '../quote/fillGas.js';

/** Refund of the request's own deposit; the request ends in `refund` (or `failure` when the refund cannot be made). */
export async function refundRequest(
  scope: SolverScope,
  request: RequestRecord,
  deposit: DepositRecord,
  failReason: FailReason,
  details?: JsonObject,
): Promise<void> {
  // The chain decides: an order its fill contract filled (by this gateway before its database was lost or restored,
  // or by another gateway with the same key) has been paid, and its deposit is the solver's, never refunded.
  if (await scope.truth.filled(request.destinationChainId, request.id as Hex)) {
    await keepFilledDeposit(scope, request, failReason);
    return;
  }
  // Recorded before the refund is sent: a restart that finds the refund in flight ends it with this reason.
  const recorded =
    (await recordRequestFailReason(scope.ctx.db, request.id, { failReason, details: details ?? null })) ?? request;
  const outcome = await refundDeposit(scope, deposit, {
    refundTo: request.refundTo as Address,
    key: request.id as Hex,
    kept: failReason === 'TRANSACTION_REVERTED' ? await revertedCallsCost(scope, request, deposit) : 0n,
  });
  if (outcome.kind === 'refunded') {
    // The refund's hash goes with the request's transaction hashes, as the reference shows refunds.
    await setStatus(scope.ctx, recorded, 'refund', {
      failReason,
      details: details ?? null,
      txHash: outcome.receipt.hash,
    });
  } else {
    await setStatus(scope.ctx, recorded, 'refundFail', {
      failReason,
      refundFailReason: outcome.refundFailReason,
      details: details ?? null,
    });
  }
}

/**
 * A request about to be refunded whose order the chain says is filled: the user was paid, so the deposit stays
 * the solver's. A request still in flight moves to `success` (its deposit is then settled to the solver as any
 * filled one); a `failure` (a fill of this gateway's reverted because another had filled it) keeps its status with
 * `refundFailReason` `MANUAL_REFUND_REQUIRED` (the wire's closed list has no better word) and details saying why,
 * so that nothing picks it up again and an operator sees it.
 */
async function keepFilledDeposit(scope: SolverScope, request: RequestRecord, failReason: FailReason): Promise<void> {
  const { ctx } = scope;
  ctx.log.error(
    { requestId: request.id, destinationChainId: request.destinationChainId, status: request.status, failReason },
    'not refunding: the chain says this order is already filled (the database did not know); its deposit is kept',
  );
  if (request.status === 'pending' || request.status === 'submitted')
    await setStatus(ctx, request, 'succeed', { fill: fillFactsOf(ctx, request) });
  else
    await setStatus(ctx, request, 'refundFail', {
      failReason,
      refundFailReason: 'MANUAL_REFUND_REQUIRED',
      details: { message: 'The order was filled on chain; its deposit is not refunded' },
    });
}

/**
 * Queues the refund of a deposit that is not its request's own in a lane of its own (keyed by the deposit), so
 * refunding it does not hold up the request's work. With `shownOn`, the refund's hash is shown in that request's
 * `txHashes`.
 */
export function queueStrayRefund(
  scope: SolverScope,
  deposit: DepositRecord,
  refundTo: Address,
  shownOn: string | null = null,
): void {
  void scope.enqueue(`deposit:${deposit.id}`, () => refundStrayDeposit(scope, deposit, refundTo, shownOn));
}

/**
 * The request's own deposit, consumed: the one its claim recorded (`requests.deposit_id`), so that a transaction
 * carrying two deposits for the request (a Multicall3 batch) never yields the other one. A row claimed before that
 * column existed falls back to the deposit whose hash is among the request's `inTxHashes`.
 */
export async function attachedDeposit(db: Kysely<Tables>, request: RequestRecord): Promise<DepositRecord | null> {
  const claimed = await db.selectFrom('requests').select('deposit_id').where('id', '=', request.id).executeTakeFirst();
  if (claimed?.deposit_id !== null && claimed?.deposit_id !== undefined) {
    const deposit = await getDeposit(db, Number(claimed.deposit_id));
    return deposit?.status === 'consumed' && deposit.requestId.toLowerCase() === request.id.toLowerCase()
      ? deposit
      : null;
  }
  if (request.inTxHashes.length === 0) return null;
  const deposits = await listDepositsForRequest(db, request.id);
  return (
    deposits.find((candidate) => candidate.status === 'consumed' && request.inTxHashes.includes(candidate.txHash)) ??
    null
  );
}

/**
 * Refunds a deposit that is not its request's own (keyed by the deposit), then consumes it. With `shownOn`, the
 * mined refund's hash is added to that request's `txHashes` first (before the deposit is consumed, so a restart
 * in between adds it then).
 */
async function refundStrayDeposit(
  scope: SolverScope,
  deposit: DepositRecord,
  refundTo: Address,
  shownOn: string | null,
): Promise<void> {
  const { db, log } = scope.ctx;
  // Handed on twice (a retry, a restart): the first one refunded and consumed it.
  if ((await getDeposit(db, deposit.id))?.status !== 'confirmed') return;
  const outcome = await refundDeposit(scope, deposit, { refundTo, key: depositKey(deposit) });
  if (outcome.kind === 'refunded' && shownOn !== null)
    await appendRequestTxHash(db, shownOn, outcome.receipt.hash, scope.ctx.now());
  if (outcome.kind === 'unrefundable' && outcome.refundFailReason === 'AMOUNT_TOO_LOW_TO_REFUND') {
    // Dust (less than the refund's gas): nothing to send back; it stays in the depository.
    log.warn(
      { requestId: deposit.requestId, txHash: deposit.txHash, amount: deposit.amount.toString() },
      'deposit too small to refund; left in the depository',
    );
  } else if (outcome.kind === 'unrefundable') {
    log.error(
      { requestId: deposit.requestId, txHash: deposit.txHash, refundFailReason: outcome.refundFailReason },
      'deposit not refunded; an operator must look',
    );
  }
  await updateDepositStatus(db, deposit.id, { status: 'consumed', fromStatus: 'confirmed', now: scope.ctx.now() });
}

/**
 * What a fill with calls that reverted on chain cost the solver, in the deposit's token (at oracle prices, rounded
 * up): the calls passed their simulation, so the revert came from what they do once mined (a contract reading the
 * block, state moved before the block), which the requester chose; the refund keeps it, as it keeps the refund's
 * own gas. 0 for a payment fill (its revert is no doing of the requester's) or when the fill's gas is not recorded.
 */
async function revertedCallsCost(scope: SolverScope, request: RequestRecord, deposit: DepositRecord): Promise<bigint> {
  const { ctx } = scope;
  const fees = request.feesActual;
  if (callsOf(request).length === 0 || fees === null) return 0n;
  const { fillGasUsed, fillGasPrice } = fees;
  if (typeof fillGasUsed !== 'string' || typeof fillGasPrice !== 'string') return 0n;
  const spent = BigInt(fillGasUsed) * BigInt(fillGasPrice);
  const destination = requireChain(ctx, request.destinationChainId);
  const origin = requireChain(ctx, deposit.chainId);
  return convert(
    spent,
    await pricedCurrency(scope, destination, destination.nativeCurrency),
    await pricedCurrency(scope, origin, requireCurrency(origin, deposit.token)),
    'up',
  );
}

/**
 * Pays a deposit back on its chain: the depository releases it (`release` checks the deposit's fields and
 * pays out at most once) or, for a deposit forwarded to the solver by the receiver, the solver sends it back.
 * The refund's gas is deducted (converted to the token at oracle prices for ERC-20 deposits), and `kept` (what a
 * reverted fill with calls cost the solver, in the deposit's token) with it.
 */
async function refundDeposit(
  scope: SolverScope,
  deposit: DepositRecord,
  target: { refundTo: Address; key: Hex; kept?: bigint },
): Promise<{ kind: 'refunded'; receipt: SentReceipt } | { kind: 'unrefundable'; refundFailReason: string }> {
  const { ctx } = scope;
  const chain = requireChain(ctx, deposit.chainId);
  const sender = scope.senderOf(deposit.chainId);
  const native = deposit.token.toLowerCase() === zeroAddress;
  const build = (amount: bigint) =>
    deposit.depositIndex === null
      ? { to: target.refundTo, data: '0x' as Hex, value: amount }
      : {
          to: chain.contracts.depository,
          data: encodeFunctionData({
            abi: depositoryAbi,
            functionName: 'release',
            args: [
              deposit.depositIndex,
              deposit.requestId as Hex,
              deposit.depositor as Address,
              deposit.token as Address,
              deposit.amount,
              target.refundTo,
              amount,
            ],
          }),
          value: 0n,
        };
  let record = await getLiveOutgoingTx(ctx.db, target.key, 'refund');
  if (record === undefined) {
    // On an OP-stack chain the refund also pays an L1 data fee, kept from the refund like its gas; priced on the
    // largest refund's bytes (a native transfer's value takes more bytes as it grows).
    const [gasUnits, l1Fee] = await Promise.all([
      ctx.market.estimateGas(deposit.chainId, { from: ctx.solver.address, ...build(1n) }),
      chain.feeModel === 'op-stack'
        ? ctx.market.l1DataFee(chain.id, representativeTxBytes(chain, build(deposit.amount)))
        : 0n,
    ]);
    const gasCost = withGasMargin(gasUnits) * (await ctx.market.gasPrice(deposit.chainId)) + l1Fee;
    const gasInToken = native
      ? gasCost
      : convert(
          gasCost,
          await pricedCurrency(scope, chain, chain.nativeCurrency),
          await pricedCurrency(scope, chain, requireCurrency(chain, deposit.token)),
          'up',
        );
    const amount = deposit.amount - gasInToken - (target.kept ?? 0n);
    if (amount <= 0n) return { kind: 'unrefundable', refundFailReason: 'AMOUNT_TOO_LOW_TO_REFUND' };
    record = await sender.send({
      requestId: target.key,
      kind: 'refund',
      ...build(amount),
      gas: withGasMargin(gasUnits),
      ledger: { kind: 'refund', refund: await refundFacts(ctx.db, deposit, target.key, amount) },
    });
  }
  const receipt = await sender.waitForReceipt(record.id);
  ctx.market.invalidateSolverBalances(deposit.chainId);
  if (receipt.status !== 'success') return { kind: 'unrefundable', refundFailReason: 'MANUAL_REFUND_REQUIRED' };
  return { kind: 'refunded', receipt };
}

/**
 * What a refund of `deposit` paying back `amount` books once it succeeds: the depository's release of the deposit
 * (what it does not pay back is kept), or the solver's own payment in native for a deposit the receiver forwarded.
 * It names (and is valued by) the request the deposit names; a refund of a forwarded deposit, keyed by `key`, the
 * request of that key.
 */
async function refundFacts(db: Kysely<Tables>, deposit: DepositRecord, key: Hex, amount: bigint): Promise<RefundFacts> {
  const fromSolver = deposit.depositIndex === null;
  const request = await getRequest(db, fromSolver ? key : deposit.requestId);
  const currency = fromSolver ? zeroAddress : deposit.token.toLowerCase();
  return {
    requestId: request?.id ?? null,
    from: fromSolver ? 'solver' : 'depository',
    currency,
    paid: amount,
    depositAmount: deposit.amount,
    valuation: inputValuation(request === undefined ? undefined : quotedRequestOf(request), deposit.chainId, currency),
  };
}

const DEPOSIT_KEY_ABI = parseAbiParameters('bytes32 requestId, uint256 chainId, bytes32 txHash, uint256 logIndex');

/** The key of a refund of one particular deposit (an orphan or a double spend), distinct from the request's. */
function depositKey(deposit: DepositRecord): Hex {
  return keccak256(
    encodeAbiParameters(DEPOSIT_KEY_ABI, [
      deposit.requestId as Hex,
      BigInt(deposit.chainId),
      deposit.txHash as Hex,
      BigInt(deposit.logIndex),
    ]),
  );
}

/** A chain's currency as `convert` takes it: its decimals and its oracle price now. */
const pricedCurrency = async (scope: SolverScope, chain: ChainConfig, currency: CurrencyConfig) => ({
  decimals: currency.decimals,
  price: await scope.ctx.market.usdPrice(chain.id, currency),
});
