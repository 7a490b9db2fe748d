import {
  encodeAbiParameters,
  encodeFunctionData,
  keccak256,
  parseAbiParameters,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import {
  getDeposit,
  listDepositsForRequest,
  updateDepositStatus,
  type DepositRecord,
} from '../../store/deposits.repository.js';
import { getLiveOutgoingTx } from '../../store/outgoingTxs.repository.js';
import type { RequestRecord } from '../../store/requestRecord.js';
import {
  appendRequestTxHash,
  getRequest,
  recordRequestFailReason,
  updateRequestStatus,
} from '../../store/requests.repository.js';
import { listRequests } from '../../store/listRequests.repository.js';
import { attachDepositToFastFill } from '../../store/fastFills.repository.js';
import type { JsonObject } from '../../store/tables.js';
import { depositoryAbi } from '../abi.js';
import { chainCurrencies, requireChain } from '../chains/requireChain.js';
import type { ChainConfig } from '../chains/types.js';
import type { CoreContext } from '../context.js';
import { errorMessage, isGatewayError } from '../errors.js';
import { crashPoint } from '../faults.js';
import { callsRevert } from '../fill/callsRevert.js';
import { fillTransaction, type DestinationCall } from '../fill/fillTransaction.js';
import { convert } from '../market.js';
import { judgeDeposit } from './depositMatch.js';
import { createFillGate, type FillPause } from './fillGate.js';
import type { SentReceipt, TransactionSender } from './ports.js';
import { defaultRetryPolicy, retryDelayMs, type RetryPolicy } from './retry.js';

import { statusMoves, type FailReason, type StatusMove } from '../requests/statusMachine.js';
import { withGasMargin } from '../gasMargin.js';

export type { FailReason };

export interface Solver {
  /** Takes a confirmed deposit (from a watcher). Work for one request is serialized; never throws. */
  handleDeposit(deposit: DepositRecord): void;
  /** After a restart: finishes fills and refunds in flight and re-decides requests left `pending`. */
  recover(): Promise<void>;
  /** Resolves when no work is queued or running (tests, shutdown). */
  idle(): Promise<void>;
  /** Fast fill: whether the request could be filled now, and why not. */
  checkFill(requestId: Hex): Promise<{ failReason: string; message: string } | null>;
  /** Fast fill: fills a request a fast fill moved to `pending`. */
  fillNow(requestId: Hex): void;
  /** Destination chains whose fills are paused (circuit breaker, `fillGate.ts`), and why. */
  fillPauses(): FillPause[];
  stop(): Promise<void>;
}

export interface CreateSolverParameters {
  ctx: CoreContext;
  /** The solver's sender per chain id. */
  senders: ReadonlyMap<number, TransactionSender>;
  /** How work that failed (an RPC error) is retried; `defaultRetryPolicy` when absent. */
  retry?: RetryPolicy;
}

/**
 * The request lifecycle after the deposit: decide, fill or refund, and record every status change.
 *
 * - A confirmed deposit pays for its request only when it matches the order (`depositMatch.ts`); it is then
 *   claimed in one transaction with the request's move `waiting -> pending`. A deposit on another chain or in
 *   another currency, or short and not sent by the order's user, is stray: refunded on its own, the request
 *   untouched. A matching deposit for a request that is no longer waiting is a double spend, refunded on its own.
 * - Before filling it re-validates: the currency and amount deposited, the expiry, the solver's balance on the
 *   destination and a simulation of the fill. Any failure refunds the deposit with its `failReason`.
 * - The fill goes through the destination's sender (recorded before broadcast, one live fill per request, and
 *   the fill contract refuses a second fill on chain): `pending -> submitted -> success`, or `failure` and a
 *   refund when it reverts.
 * - A refund releases the deposit from the depository to `refundTo` less the refund's gas (or, for a deposit
 *   forwarded through the receiver, pays it back from the solver), then `refund`.
 */
export function createSolver({ ctx, senders, retry = defaultRetryPolicy }: CreateSolverParameters): Solver {
  const { db, log } = ctx;
  const lanes = new Map<string, Promise<void>>();
  /** Gas limits from each request's latest fill simulation, used by the fill that follows it. */
  const simulatedGas = new Map<string, bigint>();
  const sleepers = new Set<() => void>();
  let stopped = false;
  // Re-decides a request the fill gate held (still `pending`, its deposit consumed) as a restart would.
  const fillGate = createFillGate({
    ctx,
    retry: (requestId) =>
      void enqueue(requestId, async () => {
        const fresh = await getRequest(db, requestId);
        if (fresh !== undefined && fresh.status === 'pending') await recoverRequest(fresh);
      }),
  });

  /** Waits `ms`, or less when the solver stops. */
  function sleep(ms: number): Promise<void> {
    if (stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      sleepers.add(wake);
    });
  }

  /**
   * Runs `work`; when it throws (an RPC error while deciding, filling or refunding), waits with backoff and runs
   * `resume`, which picks the work up from what is recorded, up to `retry.attempts` in all.
   */
  async function withRetries(key: string, work: () => Promise<void>, resume: () => Promise<void>): Promise<void> {
    for (let attempt = 1; !stopped; attempt++) {
      try {
        await (attempt === 1 ? work() : resume());
        return;
      } catch (error) {
        if (stopped) {
          // Shutting down: the sender and the chains stop under the work; recovery picks it up at the next start.
          log.info({ lane: key, reason: errorMessage(error) }, 'solver stopping: this work resumes at the next start');
          return;
        }
        if (attempt >= retry.attempts) {
          log.error({ err: error, lane: key, attempts: attempt }, 'solver work failed; it is retried after a restart');
          return;
        }
        const delayMs = retryDelayMs(retry, attempt);
        log.warn({ err: error, lane: key, attempt, retryInMs: delayMs }, 'solver work failed; retrying');
        await sleep(delayMs);
      }
    }
  }

  /** Runs `work` after every earlier piece of work for the same key (a request id); retried by `resume`. */
  function enqueue(key: string, work: () => Promise<void>, resume: () => Promise<void> = work): Promise<void> {
    const previous = lanes.get(key) ?? Promise.resolve();
    const next = previous
      .then(() => withRetries(key, work, resume))
      .catch((error: unknown) =>
        log.error({ err: error, lane: key }, 'solver work failed; it is retried after a restart'),
      );
    lanes.set(key, next);
    void next.finally(() => {
      if (lanes.get(key) === next) lanes.delete(key);
    });
    return next;
  }

  const chainOf = (chainId: number): ChainConfig => requireChain(ctx, chainId);
  const senderOf = (chainId: number): TransactionSender => {
    const sender = senders.get(chainId);
    if (sender === undefined) throw new Error(`no sender for chain ${chainId}`);
    return sender;
  };

  /** Applies one move of the status machine (`statusMoves`); skipped (null) when the request moved on. */
  async function setStatus(
    request: RequestRecord,
    move: StatusMove,
    extra: Partial<{
      failReason: string | null;
      refundFailReason: string | null;
      details: JsonObject | null;
      inTxHash: string;
      txHash: string;
      feesActual: JsonObject;
    }> = {},
  ) {
    const { to: status, from } = statusMoves[move];
    const updated = await updateRequestStatus(db, request.id, { status, fromStatus: from, now: ctx.now(), ...extra });
    if (updated === null)
      log.warn({ requestId: request.id, status, from }, 'status change skipped: the request moved on');
    else {
      log.info({ requestId: request.id, status, failReason: extra.failReason ?? undefined }, 'request status');
      ctx.metrics?.statusChanged(status, extra.failReason ?? null);
    }
    return updated;
  }

  async function processDeposit(deposit: DepositRecord): Promise<void> {
    const request = await getRequest(db, deposit.requestId);
    // A sweep of a deposit address is sent by the solver itself, under the request the gateway decided the transfer
    // pays (`src/core/depositAddresses/processor.ts`): it is the order's own deposit, as if its user had sent it.
    const swept = deposit.sender !== null && deposit.sender.toLowerCase() === ctx.solver.address.toLowerCase();
    const verdict =
      request === undefined ? undefined : judgeDeposit(request, swept ? { ...deposit, sender: request.user } : deposit);
    // The request's own deposit is consumed together with the request's move. Any other deposit (a double spend,
    // an unknown request) is consumed only once its refund is done: a crash before that leaves it `confirmed`,
    // and the watcher hands it on again at start, so it cannot be lost. Consuming first and rolling back keeps
    // the conditional update of the deposit as the one decision between two instances.
    const claim = await db
      .transaction()
      .execute(async (trx) => {
        const consumed = await updateDepositStatus(trx, deposit.id, {
          status: 'consumed',
          fromStatus: 'confirmed',
          now: ctx.now(),
        });
        if (consumed === null) return 'taken' as const;
        if (request !== undefined && verdict !== undefined && verdict.kind !== 'stray') {
          // `depositing`: the gateway sent this deposit itself for the user's permit (`src/core/permits`) or
          // gasless batch (`POST /execute`).
          const moved = await updateRequestStatus(trx, request.id, {
            status: statusMoves.claim.to,
            fromStatus: statusMoves.claim.from,
            inTxHash: deposit.txHash,
            now: ctx.now(),
          });
          if (moved !== null) return 'primary' as const;
          // The first matching deposit of a fast-filled request pays for the fill (and releases the key's hold).
          if (verdict.kind === 'pays') {
            const attached = await attachDepositToFastFill(trx, request.id, deposit.txHash, ctx.now());
            if (attached !== null) return 'fast' as const;
          }
        }
        throw new NotOwnDeposit(request === undefined ? 'orphan' : verdict?.kind === 'pays' ? 'extra' : 'stray');
      })
      .catch((error: unknown) => {
        if (error instanceof NotOwnDeposit) return error.claim;
        throw error;
      });
    if (claim === 'taken') return;
    if (claim === 'primary') ctx.metrics?.statusChanged('pending', null);
    if (claim === 'fast') {
      // The fast fill failed before its deposit arrived: the deposit is the order's own and is refunded.
      const paid = await getRequest(db, deposit.requestId);
      if (paid !== undefined && paid.status === 'failure' && paid.refundFailReason === null) {
        log.warn({ requestId: paid.id, txHash: deposit.txHash }, 'deposit for a fast fill that failed: refunding it');
        await refundRequest(paid, deposit, (paid.failReason as FailReason | null) ?? 'EXECUTION_REVERTED');
      }
      return;
    }
    crashPoint(ctx.config.crashAt, 'deposit-claimed');
    // A deposit that is not the request's own is refunded in a lane of its own, so refunding it does not hold up
    // the request's work (its proper deposit may be right behind).
    if (claim === 'orphan' || request === undefined) {
      log.warn(
        { requestId: deposit.requestId, txHash: deposit.txHash },
        'deposit for an unknown request: refunding the depositor',
      );
      queueStrayRefund(deposit, deposit.depositor as Address);
      return;
    }
    // A swept deposit refunded on its own beside a request already paid is a leg of the address's transfer (a strict
    // over-payment's excess, a second transfer): its refund is shown in the request's `txHashes` beside the fill.
    const shownOn = swept && request.status !== 'waiting' ? request.id : null;
    if (claim === 'stray') {
      const why = verdict?.kind === 'stray' ? verdict.why : 'short-not-from-user';
      log.warn(
        { requestId: request.id, txHash: deposit.txHash, chainId: deposit.chainId, why },
        'deposit that cannot pay for its order: refunding it on its own; the request is left as it was',
      );
      queueStrayRefund(deposit, deposit.depositor as Address, shownOn);
      return;
    }
    if (claim === 'extra') {
      log.warn(
        { requestId: request.id, txHash: deposit.txHash, status: request.status },
        'second deposit for a paid request: refunding it (DOUBLE_SPEND)',
      );
      // A swept deposit names its refund target as depositor (the transfer's own sender, or the address's
      // refundTo): a second transfer to a strict address goes back to whoever sent it, not to the first sender.
      queueStrayRefund(deposit, (swept ? deposit.depositor : request.refundTo) as Address, shownOn);
      return;
    }
    await decideAndFill((await getRequest(db, request.id))!, deposit);
  }

  function queueStrayRefund(deposit: DepositRecord, refundTo: Address, shownOn: string | null = null): void {
    void enqueue(`deposit:${deposit.id}`, () => refundStrayDeposit(deposit, refundTo, shownOn));
  }

  /**
   * Refunds a deposit that is not its request's own (keyed by the deposit), then consumes it. With `shownOn`, the
   * mined refund's hash is added to that request's `txHashes` first (before the deposit is consumed, so a restart
   * in between adds it then).
   */
  async function refundStrayDeposit(deposit: DepositRecord, refundTo: Address, shownOn: string | null): Promise<void> {
    // Handed on twice (a retry, a restart): the first one refunded and consumed it.
    if ((await getDeposit(db, deposit.id))?.status !== 'confirmed') return;
    const outcome = await refundDeposit(deposit, { refundTo, key: depositKey(deposit) });
    if (outcome.kind === 'refunded' && shownOn !== null) await appendRequestTxHash(db, shownOn, outcome.receipt.hash);
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
    await updateDepositStatus(db, deposit.id, { status: 'consumed', fromStatus: 'confirmed', now: ctx.now() });
  }

  async function decideAndFill(request: RequestRecord, deposit: DepositRecord): Promise<void> {
    const reason = await validate(request, deposit);
    if (reason !== null) {
      await refundRequest(request, deposit, reason.failReason, reason.details);
      return;
    }
    const gate = await fillGate.check(request);
    if (gate.kind === 'refund') await refundRequest(request, deposit, gate.failReason, gate.details);
    if (gate.kind !== 'fill') return;
    await fill(request, deposit);
  }

  /** The user's calls a request's fill runs (none for a plain payment). */
  const callsOf = (request: RequestRecord): DestinationCall[] =>
    ((request.quote.calls ?? []) as Array<{ to: Address; data: Hex; value: string }>).map((call): DestinationCall => ({
      to: call.to,
      data: call.data,
      value: BigInt(call.value),
    }));

  /**
   * A fill's revert as the user needs it: when the request has calls, the message names the calls' target
   * and the call's decoded revert (as the quote's simulation does), not the solver's fill contract.
   */
  const fillRevert = (request: RequestRecord, error: unknown): unknown =>
    callsRevert(callsOf(request), chainOf(request.destinationChainId).displayName, error);

  function fillOf(request: RequestRecord) {
    const destination = chainOf(request.destinationChainId);
    const calls = callsOf(request);
    return fillTransaction({
      requestId: request.id as Hex,
      contracts: destination.contracts,
      solver: ctx.solver.address,
      recipient: request.recipient as Address,
      currency: request.destinationCurrency as Address,
      amount: request.amountOut,
      calls,
    });
  }

  async function validate(
    request: RequestRecord,
    deposit: DepositRecord,
  ): Promise<{ failReason: FailReason; details?: JsonObject } | null> {
    // Stray deposits never get here (`judgeDeposit`); kept for requests claimed before that rule existed.
    if (
      deposit.chainId !== request.originChainId ||
      deposit.token.toLowerCase() !== request.originCurrency.toLowerCase()
    ) {
      return { failReason: 'ORIGIN_CURRENCY_MISMATCH' };
    }
    if (deposit.amount < request.amountIn) return { failReason: 'DEPOSITED_AMOUNT_TOO_LOW_TO_FILL' };
    return validateFill(request);
  }

  /** What a fill needs whatever paid for it: the order is live, the solver holds the output, the fill simulates. */
  async function validateFill(
    request: RequestRecord,
  ): Promise<{ failReason: FailReason; details?: JsonObject } | null> {
    if (ctx.now() > request.expiresAt) return { failReason: 'ORDER_EXPIRED' };
    // The balance read and the simulation are independent: both at once (a fill waits on the slower one only).
    const [balance, simulation] = await Promise.all([
      ctx.market.balanceOf(request.destinationChainId, ctx.solver.address, request.destinationCurrency as Address),
      ctx.market.estimateGas(request.destinationChainId, { from: ctx.solver.address, ...fillOf(request) }).then(
        (gas) => ({ gas }),
        (error: unknown) => ({ error: fillRevert(request, error) }),
      ),
    ]);
    if (balance < request.amountOut) return { failReason: 'SOLVER_BALANCE_TOO_LOW' };
    if ('error' in simulation) {
      const { error } = simulation;
      if (isGatewayError(error) && error.code === 'DESTINATION_TX_FAILED') {
        return { failReason: 'EXECUTION_REVERTED', details: { message: error.message, revert: error.data ?? null } };
      }
      throw error;
    }
    // The simulation's estimate is the fill's gas limit (plus a margin): no second estimate before sending.
    simulatedGas.set(request.id, withGasMargin(simulation.gas));
    return null;
  }

  /** Fills a request; `deposit` is null for a fast fill whose deposit has not arrived (nothing to refund then). */
  async function fill(request: RequestRecord, deposit: DepositRecord | null): Promise<void> {
    const sender = senderOf(request.destinationChainId);
    const tx = fillOf(request);
    let record = await getLiveOutgoingTx(db, request.id, 'fill');
    if (record === undefined) {
      try {
        const gas = simulatedGas.get(request.id);
        simulatedGas.delete(request.id);
        record = await sender.send({
          requestId: request.id as Hex,
          kind: 'fill',
          ...tx,
          ...(gas === undefined ? {} : { gas }),
        });
        if (deposit !== null) ctx.metrics?.fillBroadcast((ctx.now() - deposit.createdAt) / 1000);
      } catch (sendError) {
        // The node refused the fill outright (nothing was broadcast, the nonce was released): refund.
        const error = fillRevert(request, sendError);
        const reason = rejectedFillReason(error);
        if (reason === null) throw error;
        await refundOrFail(
          request,
          deposit,
          reason,
          isGatewayError(error) ? { message: error.message, revert: error.data ?? null } : undefined,
        );
        return;
      }
    }
    if (record.status === 'failed' && record.nonce === null) {
      // A fill the node rejected before a crash: it never reached the chain.
      await refundOrFail(request, deposit, 'EXECUTION_REVERTED');
      return;
    }
    const hash = record.hashes.at(-1);
    if (hash !== undefined) await setStatus(request, 'submit', { txHash: hash });
    crashPoint(ctx.config.crashAt, 'fill-submitted');
    await finishFill(request, deposit, record.id);
  }

  async function finishFill(
    request: RequestRecord,
    deposit: DepositRecord | null,
    outgoingTxId: number,
  ): Promise<void> {
    const receipt = await senderOf(request.destinationChainId).waitForReceipt(outgoingTxId);
    ctx.market.invalidateSolverBalances(request.destinationChainId);
    if (receipt.status === 'success') {
      const succeeded = await setStatus(request, 'succeed', {
        txHash: receipt.hash,
        feesActual: actualFees(request, receipt),
      });
      if (succeeded !== null && deposit !== null) ctx.metrics?.depositSucceeded((ctx.now() - deposit.createdAt) / 1000);
      return;
    }
    const failed = await setStatus(request, 'fail', {
      txHash: receipt.hash,
      failReason: 'TRANSACTION_REVERTED',
    });
    crashPoint(ctx.config.crashAt, 'fill-reverted');
    const paid = deposit ?? (failed === null ? null : await attachedDeposit(failed));
    if (failed !== null && paid !== null) await refundRequest(failed, paid, 'TRANSACTION_REVERTED');
  }

  /** A request that cannot be filled: its deposit is refunded, or without one (a fast fill) it simply fails. */
  async function refundOrFail(
    request: RequestRecord,
    deposit: DepositRecord | null,
    failReason: FailReason,
    details?: JsonObject,
  ): Promise<void> {
    // A fast fill's deposit may have arrived meanwhile (attached to the request): it is refunded, never kept.
    const fresh = deposit === null ? await getRequest(db, request.id) : undefined;
    const paid = deposit ?? (fresh === undefined ? null : await attachedDeposit(fresh));
    if (paid !== null) await refundRequest(fresh ?? request, paid, failReason, details);
    else await setStatus(request, 'fail', { failReason, details: details ?? null });
  }

  /** Refund of the request's own deposit; the request ends in `refund` (or `failure` when the refund cannot be made). */
  async function refundRequest(
    request: RequestRecord,
    deposit: DepositRecord,
    failReason: FailReason,
    details?: JsonObject,
  ): Promise<void> {
    // Recorded before the refund is sent: a restart that finds the refund in flight ends it with this reason.
    await recordRequestFailReason(db, request.id, { failReason, details: details ?? null });
    const outcome = await refundDeposit(deposit, { refundTo: request.refundTo as Address, key: request.id as Hex });
    if (outcome.kind === 'refunded') {
      // The refund's hash goes with the request's transaction hashes, as the reference shows refunds.
      await setStatus(request, 'refund', {
        failReason,
        details: details ?? null,
        txHash: outcome.receipt.hash,
      });
    } else {
      await setStatus(request, 'refundFail', {
        failReason,
        refundFailReason: outcome.refundFailReason,
        details: details ?? null,
      });
    }
  }

  /**
   * Pays a deposit back on its chain: the depository releases it (`release` checks the deposit's fields and
   * pays out at most once) or, for a deposit forwarded to the solver by the receiver, the solver sends it back.
   * The refund's gas is deducted (converted to the token at oracle prices for ERC-20 deposits).
   */
  async function refundDeposit(
    deposit: DepositRecord,
    target: { refundTo: Address; key: Hex },
  ): Promise<{ kind: 'refunded'; receipt: SentReceipt } | { kind: 'unrefundable'; refundFailReason: string }> {
    const chain = chainOf(deposit.chainId);
    const sender = senderOf(deposit.chainId);
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
    let record = await getLiveOutgoingTx(db, target.key, 'refund');
    if (record === undefined) {
      const gasUnits = await ctx.market.estimateGas(deposit.chainId, { from: ctx.solver.address, ...build(1n) });
      const gasCost = withGasMargin(gasUnits) * (await ctx.market.gasPrice(deposit.chainId));
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
      const amount = deposit.amount - gasInToken;
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

  function actualFees(request: RequestRecord, receipt: SentReceipt): JsonObject {
    return {
      // A gasless batch recorded its origin gas in the actual fees when it was accepted.
      ...(request.feesActual ?? request.feesQuoted),
      fillGasUsed: receipt.gasUsed.toString(),
      fillGasPrice: receipt.effectiveGasPrice.toString(),
    };
  }

  /** The request's own deposit: consumed, and its hash among the request's `inTxHashes`. */
  async function attachedDeposit(request: RequestRecord): Promise<DepositRecord | null> {
    if (request.inTxHashes.length === 0) return null;
    const deposits = await listDepositsForRequest(db, request.id);
    return (
      deposits.find((candidate) => candidate.status === 'consumed' && request.inTxHashes.includes(candidate.txHash)) ??
      null
    );
  }

  /**
   * A retry: picks a request's work up from what is recorded, as a restart would, when the request is in flight
   * (and, given `depositTxHash`, only when that deposit is the request's own).
   */
  async function resumeRequest(requestId: string, depositTxHash?: string): Promise<void> {
    const fresh = await getRequest(db, requestId);
    if (fresh === undefined) return;
    const inFlight =
      fresh.status === 'pending' ||
      fresh.status === 'submitted' ||
      (fresh.status === 'failure' && fresh.refundFailReason === null);
    if (!inFlight) return;
    if (depositTxHash !== undefined && !fresh.inTxHashes.includes(depositTxHash.toLowerCase())) return;
    await recoverRequest(fresh);
  }

  async function recoverRequest(request: RequestRecord): Promise<void> {
    const deposit = await attachedDeposit(request);
    if (deposit === null && request.fastFill !== null) {
      const fastFillTx = await getLiveOutgoingTx(db, request.id, 'fill');
      if (fastFillTx !== undefined) await finishFill(request, null, fastFillTx.id);
      else if (request.status === 'pending') await fill(request, null);
      return;
    }
    if (deposit === null) {
      log.error(
        { requestId: request.id },
        'request is past waiting but its deposit is not recorded; leaving it for an operator',
      );
      return;
    }
    const refund = await getLiveOutgoingTx(db, request.id, 'refund');
    if (refund !== undefined) {
      const receipt = await senderOf(deposit.chainId).waitForReceipt(refund.id);
      const failReason = request.failReason ?? 'UNKNOWN';
      if (receipt.status === 'success') await setStatus(request, 'refund', { failReason, txHash: receipt.hash });
      else
        await setStatus(request, 'refundFail', {
          failReason,
          refundFailReason: 'MANUAL_REFUND_REQUIRED',
        });
      return;
    }
    // `failure` with no refund fail reason: the fill reverted and the refund was never recorded. Checked before
    // the fill's branch, which would only find the reverted receipt again and leave the deposit unrefunded.
    if (request.status === 'failure') {
      await refundRequest(request, deposit, (request.failReason as FailReason | null) ?? 'TRANSACTION_REVERTED');
      return;
    }
    const fillTx = await getLiveOutgoingTx(db, request.id, 'fill');
    if (fillTx !== undefined && fillTx.status === 'failed' && fillTx.nonce === null) {
      await refundRequest(request, deposit, 'EXECUTION_REVERTED');
      return;
    }
    if (fillTx !== undefined) {
      if (request.status === 'pending' && fillTx.hashes.length > 0)
        await setStatus(request, 'submit', { txHash: fillTx.hashes.at(-1)! });
      await finishFill(request, deposit, fillTx.id);
      return;
    }
    await decideAndFill(request, deposit);
  }

  return {
    handleDeposit(deposit) {
      void enqueue(
        deposit.requestId,
        () => processDeposit(deposit),
        async () => {
          // Claims it if the failed attempt did not get that far (a no-op otherwise), then resumes the request.
          await processDeposit(deposit);
          await resumeRequest(deposit.requestId, deposit.txHash);
        },
      );
    },
    async recover() {
      for (const status of ['pending', 'submitted', 'failure'] as const) {
        let continuation: string | undefined;
        do {
          const page = await listRequests(
            db,
            { status },
            { limit: 50, ...(continuation === undefined ? {} : { continuation }) },
          );
          for (const request of page.requests) {
            if (status === 'failure' && request.refundFailReason !== null) continue;
            void enqueue(
              request.id,
              async () => {
                const fresh = await getRequest(db, request.id);
                if (fresh !== undefined && fresh.status === status) await recoverRequest(fresh);
              },
              () => resumeRequest(request.id),
            );
          }
          continuation = page.continuation;
        } while (continuation !== undefined);
      }
    },
    async checkFill(requestId) {
      const request = await getRequest(db, requestId);
      if (request === undefined) return { failReason: 'UNKNOWN', message: 'no such request' };
      const blocked = await validateFill(request);
      return blocked === null
        ? null
        : {
            failReason: blocked.failReason,
            message: typeof blocked.details?.message === 'string' ? blocked.details.message : blocked.failReason,
          };
    },
    fillNow(requestId) {
      void enqueue(
        requestId,
        async () => {
          const request = await getRequest(db, requestId);
          if (request !== undefined && request.status === 'pending' && request.fastFill !== null)
            await fill(request, null);
        },
        () => resumeRequest(requestId),
      );
    },
    async idle() {
      while (lanes.size > 0) await Promise.all([...lanes.values()]);
    },
    fillPauses: () => fillGate.pauses(),
    async stop() {
      stopped = true;
      for (const wake of [...sleepers]) wake();
      fillGate.stop();
      await Promise.all([...lanes.values()]);
    },
  };
}

/** Rolls back a claim that found the deposit is not its request's own: it stays `confirmed` until refunded. */
class NotOwnDeposit extends Error {
  constructor(readonly claim: 'orphan' | 'stray' | 'extra') {
    super(`not the request's own deposit (${claim})`);
  }
}

/** The failReason of a fill the node refused to accept, or null for an error that is not a refusal. */
function rejectedFillReason(error: unknown): FailReason | null {
  if (!isGatewayError(error)) return null;
  if (error.code === 'INSUFFICIENT_LIQUIDITY') return 'SOLVER_BALANCE_TOO_LOW';
  if (error.code === 'DESTINATION_TX_FAILED') return 'EXECUTION_REVERTED';
  return null;
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
