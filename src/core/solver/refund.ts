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
import { chainCurrencies, requireChain } from '../chains/requireChain.js';
import { DEFAULT_UNKNOWN_DEPOSIT_GRACE_SECONDS, type ChainConfig } from '../chains/types.js';
import { withGasMargin } from '../gasMargin.js';
import { convert } from '../market.js';
import type { FailReason } from '../vocabulary/statusMachine.js';
import { callsOf } from './requestCalls.js';
import type { SentReceipt } from '../ports/solver.js';
import type { SolverScope } from './scope.js';
import { setStatus } from './setStatus.js';
import { representativeTxBytes } from '../quote/fillGas.js';

/** A request that cannot be filled: its deposit is refunded, or without one (a fast fill) it simply fails. */
export async function refundOrFail(
  scope: SolverScope,
  request: RequestRecord,
  deposit: DepositRecord | null,
  failReason: FailReason,
  details?: JsonObject,
): Promise<void> {
  const { db } = scope.ctx;
  // A fast fill's deposit may have arrived meanwhile (attached to the request): it is refunded, never kept.
  const fresh = deposit === null ? await getRequest(db, request.id) : undefined;
  const paid = deposit ?? (fresh === undefined ? null : await attachedDeposit(db, fresh));
  if (paid !== null) await refundRequest(scope, fresh ?? request, paid, failReason, details);
  else await setStatus(scope.ctx, request, 'fail', { failReason, details: details ?? null });
}

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
  await recordRequestFailReason(scope.ctx.db, request.id, { failReason, details: details ?? null });
  const outcome = await refundDeposit(scope, deposit, {
    refundTo: request.refundTo as Address,
    key: request.id as Hex,
    kept: failReason === 'TRANSACTION_REVERTED' ? await revertedCallsCost(scope, request, deposit) : 0n,
  });
  if (outcome.kind === 'refunded') {
    // The refund's hash goes with the request's transaction hashes, as the reference shows refunds.
    await setStatus(scope.ctx, request, 'refund', {
      failReason,
      details: details ?? null,
      txHash: outcome.receipt.hash,
    });
  } else {
    await setStatus(scope.ctx, request, 'refundFail', {
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
  if (request.status === 'pending' || request.status === 'submitted') await setStatus(ctx, request, 'succeed');
  else
    await setStatus(ctx, request, 'refundFail', {
      failReason,
      refundFailReason: 'MANUAL_REFUND_REQUIRED',
      details: { message: 'The order was filled on chain; its deposit is not refunded' },
    });
}

/**
 * Whether any configured chain's fill contract filled request `requestId`: for a deposit whose request the database
 * does not know, and so whose destination it cannot tell. One indexed read per chain, all at once.
 */
async function filledAnywhere(scope: SolverScope, requestId: Hex): Promise<number | undefined> {
  const chains = scope.ctx.config.chains.map((chain) => chain.id);
  const filled = await Promise.all(chains.map((chainId) => scope.truth.filled(chainId, requestId)));
  return chains.find((_, i) => filled[i]);
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
 * Queues the refund of a deposit for a request the database does not know, in the deposit's own lane. The database
 * may have lost the request (deleted, restored from an older backup, another database used with the same key): when
 * any chain's fill contract filled its request id, the deposit paid for that fill and is not refunded.
 *
 * The chains are read after the grace (`unknownDepositGraceSeconds`, counted from the deposit's block): a request of
 * another gateway with the same key is filled within it, and a fill still in flight when the chains were read would
 * be paid twice by the refund. Nothing else waits meanwhile (the deposit has a lane of its own); a solver stopping
 * leaves the deposit `confirmed`, and the watcher hands it on again at the next start.
 */
export function queueUnknownRefund(scope: SolverScope, deposit: DepositRecord): void {
  void scope.enqueue(`deposit:${deposit.id}`, async () => {
    const { db, log } = scope.ctx;
    if ((await getDeposit(db, deposit.id))?.status !== 'confirmed') return;
    if (!(await scope.pause(await unknownDepositGraceLeftMs(scope, deposit)))) return;
    if (deposit.depositIndex !== null && (await scope.truth.released(deposit.chainId, deposit.depositIndex))) {
      // Refunded or settled already (a rebuild from chain events reads old deposits again): nothing is owed.
      log.warn(
        { requestId: deposit.requestId, txHash: deposit.txHash, chainId: deposit.chainId },
        'deposit for a request this database does not know, already released on chain: nothing to do',
      );
      await updateDepositStatus(db, deposit.id, { status: 'consumed', fromStatus: 'confirmed', now: scope.ctx.now() });
      return;
    }
    const filledOn = await filledAnywhere(scope, deposit.requestId as Hex);
    if (filledOn === undefined) {
      await refundStrayDeposit(scope, deposit, deposit.depositor as Address, null);
      return;
    }
    log.error(
      { requestId: deposit.requestId, txHash: deposit.txHash, chainId: deposit.chainId, filledOn },
      'deposit for a request this database does not know, filled on chain: not refunded; left in the depository',
    );
    await updateDepositStatus(db, deposit.id, { status: 'consumed', fromStatus: 'confirmed', now: scope.ctx.now() });
  });
}

/**
 * What is left of the grace of a deposit for an unknown request: the grace less the deposit's age, the larger of the
 * time since the watcher recorded it and its depth in blocks times the block time (a rebuild reads old deposits
 * again: their grace is long over).
 */
async function unknownDepositGraceLeftMs(scope: SolverScope, deposit: DepositRecord): Promise<number> {
  const { ctx } = scope;
  const graceMs = (ctx.config.unknownDepositGraceSeconds ?? DEFAULT_UNKNOWN_DEPOSIT_GRACE_SECONDS) * 1_000;
  if (graceMs === 0) return 0;
  const seenMs = ctx.now() - deposit.createdAt;
  if (seenMs >= graceMs) return 0;
  const blockTimeMs = requireChain(ctx, deposit.chainId).blockTime * 1_000;
  const depth = (await scope.truth.head(deposit.chainId)) - deposit.blockNumber;
  const depthMs = depth > 0n ? Number(depth) * blockTimeMs : 0;
  return Math.max(0, graceMs - Math.max(seenMs, depthMs));
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
    {
      decimals: destination.nativeCurrency.decimals,
      price: await ctx.market.usdPrice(destination.id, destination.nativeCurrency),
    },
    {
      decimals: tokenDecimals(origin, deposit.token),
      price: await ctx.market.usdPrice(origin.id, tokenConfig(origin, deposit.token)),
    },
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
          {
            decimals: chain.nativeCurrency.decimals,
            price: await ctx.market.usdPrice(chain.id, chain.nativeCurrency),
          },
          {
            decimals: tokenDecimals(chain, deposit.token),
            price: await ctx.market.usdPrice(chain.id, tokenConfig(chain, deposit.token)),
          },
          'up',
        );
    const amount = deposit.amount - gasInToken - (target.kept ?? 0n);
    if (amount <= 0n) return { kind: 'unrefundable', refundFailReason: 'AMOUNT_TOO_LOW_TO_REFUND' };
    record = await sender.send({
      requestId: target.key,
      kind: 'refund',
      ...build(amount),
      gas: withGasMargin(gasUnits),
    });
  }
  const receipt = await sender.waitForReceipt(record.id);
  ctx.market.invalidateSolverBalances(deposit.chainId);
  if (receipt.status !== 'success') return { kind: 'unrefundable', refundFailReason: 'MANUAL_REFUND_REQUIRED' };
  return { kind: 'refunded', receipt };
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

function tokenConfig(chain: ChainConfig, token: string) {
  const currency = chainCurrencies(chain).find((candidate) => candidate.address.toLowerCase() === token.toLowerCase());
  if (currency === undefined) throw new Error(`token ${token} is not configured on chain ${chain.id}`);
  return currency;
}
const tokenDecimals = (chain: ChainConfig, token: string): number => tokenConfig(chain, token).decimals;
