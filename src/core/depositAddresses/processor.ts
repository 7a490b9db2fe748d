import { encodeFunctionData, zeroAddress, type Address, type Hex } from 'viem';
import { depositAddressFactoryAbi } from '../../../generated/contracts/index.js';
import {
  fillInRefundTo,
  getDepositAddress,
  getTransfer,
  linkRequestToAddress,
  listTransfers,
  updateTransfer,
} from '../../store/depositAddresses.repository.js';
import type { DepositAddressRecord, SweepLeg, TransferRecord } from '../../records/depositAddress.js';
import { getLiveOutgoingTx } from '../../store/outgoingTxs.repository.js';
import { getRequest } from '../../store/requests.repository.js';
import { requireChain } from '../chains/requireChain.js';
import type { CoreContext } from '../context.js';
import { errorMessage, isGatewayError } from '../errors.js';
import { crashPoint } from '../faults.js';
import { getQuote } from '../quote/getQuote.js';
import type { TransactionSender } from '../ports/solver.js';
import { refundOnlyIdOf, sweepIdOf } from '../vocabulary/depositAddress.js';
import { minimumWorthSweeping } from './sweepWorth.js';

export interface DepositAddressProcessor {
  /** A confirmed transfer (or one a crash left `sweeping`): decided, then swept once. Never throws. */
  handleTransfer(transfer: TransferRecord): void;
  idle(): Promise<void>;
  stop(): Promise<void>;
}

export interface CreateDepositAddressProcessorParameters {
  ctx: CoreContext;
  senders: ReadonlyMap<number, TransactionSender>;
  /** Whether the factory on `chainId` has used `sweepId` (the chain's word, for a crash that lost the record). */
  isSwept: (chainId: number, sweepId: Hex) => Promise<boolean>;
}

/**
 * What happens to a transfer to a deposit address once it is confirmed (`docs/deposit-addresses.md`):
 *
 * 0. Worth it: a transfer (with the dust left at the address before it, in the same token) worth less than its sweep
 *    costs times the margin (`sweepWorth.ts`) is recorded `dust` and left; the next transfer there that makes the sum
 *    worth it takes the dust along in its own sweep (its legs count the sum; the dust is `swept`, `dustSweepId`). A
 *    strict address's transfer paying its waiting order in full is always swept.
 * 1. Decide (recorded in one update, `confirmed -> sweeping`, with the request id, the sweep id and the legs):
 *    - strict: the legs are deposits under the order's request id. The quoted currency over the quoted amount is
 *      split in two legs (the quoted amount, then the excess, which the solver refunds on its own); anything else
 *      (short, another listed currency, a second transfer) is one leg that the solver's usual rules refund.
 *    - open: the transfer is re-quoted at current prices into a request of its own (the address's first quote is
 *      reused when the transfer is its exact amount and it still waits); `supersedes_request_id` links a re-quote
 *      to the quote it replaces. A transfer that cannot be quoted (too small for the fees) is deposited under an
 *      id of no request, so the solver refunds it to its depositor.
 *    Refunds go to the address's `refundTo`, or the detected depositor when that is the zero address or absent:
 *    each leg names that as its depositor.
 * 2. Sweep: `DepositAddressFactory.sweep` through the origin chain's sender (recorded before broadcast, one per
 *    sweep id; the factory refuses a sweep id twice). The deposit watcher then sees the depository's `Deposit`
 *    events and the solver fills or refunds as for any deposit.
 */
export function createDepositAddressProcessor({
  ctx,
  senders,
  isSwept,
}: CreateDepositAddressProcessorParameters): DepositAddressProcessor {
  const { db, log } = ctx;
  const lanes = new Map<string, Promise<void>>();
  let stopped = false;

  function enqueue(key: string, work: () => Promise<void>): void {
    const next = (lanes.get(key) ?? Promise.resolve())
      .then(async () => {
        if (!stopped) await work();
      })
      .catch((error: unknown) => {
        if (stopped)
          log.info(
            { lane: key, reason: errorMessage(error) },
            'deposit-address work stopping: resumed at the next start',
          );
        else log.error({ err: error, lane: key }, 'deposit-address work failed; it is resumed after a restart');
      });
    lanes.set(key, next);
    void next.finally(() => {
      if (lanes.get(key) === next) lanes.delete(key);
    });
  }

  const senderOf = (chainId: number): TransactionSender => {
    const sender = senders.get(chainId);
    if (sender === undefined) throw new Error(`no sender for chain ${chainId}`);
    return sender;
  };

  async function process(transferId: number): Promise<void> {
    let transfer = await getTransfer(db, transferId);
    if (transfer === undefined) return;
    if (transfer.status === 'confirmed') {
      const address = await getDepositAddress(db, transfer.chainId, transfer.address);
      if (address === undefined) return;
      // Dust left at the address earlier, in the same token, goes along with this transfer when the sum is worth a
      // sweep; a sum that is not stays there, this transfer recorded as dust too: never one sweep each.
      const token = transfer.token.toLowerCase();
      const dust = (
        await listTransfers(db, { chainId: transfer.chainId, address: transfer.address, status: ['dust'] })
      ).filter((other) => other.token.toLowerCase() === token && other.id !== transfer!.id);
      const total = dust.reduce((sum, other) => sum + other.amount, transfer.amount);
      if (!(await paysOrderInFull(address, transfer)) && !(await worthSweeping(address, transfer, total))) {
        const left = await updateTransfer(db, transfer.id, { status: 'dust', fromStatus: 'confirmed', now: ctx.now() });
        if (left !== null)
          log.warn(
            {
              chainId: transfer.chainId,
              address: transfer.address,
              txHash: transfer.txHash,
              amount: transfer.amount.toString(),
              unswept: total.toString(),
            },
            'deposit-address transfer worth less than its sweep: recorded as dust and left at the address',
          );
        return;
      }
      const decided = await decide(address, { ...transfer, amount: total });
      const updated = await db
        .transaction()
        .execute(async (trx) => {
          const moved = await updateTransfer(trx, transfer!.id, {
            ...decided,
            status: 'sweeping',
            fromStatus: 'confirmed',
            now: ctx.now(),
          });
          if (moved === null) return null;
          for (const other of dust) {
            const taken = await updateTransfer(trx, other.id, {
              status: 'swept',
              fromStatus: 'dust',
              dustSweepId: decided.sweepId,
              now: ctx.now(),
            });
            // Another instance took it along first: this decision's legs count it, so it is not made.
            if (taken === null) throw new DustMoved();
          }
          return moved;
        })
        .catch((error: unknown) => {
          if (error instanceof DustMoved) return 'again' as const;
          throw error;
        });
      // Decided again from what is left (a request the lost decision quoted just expires unpaid).
      if (updated === 'again') return process(transferId);
      if (updated === null) return;
      transfer = updated;
      log.info(
        {
          chainId: transfer.chainId,
          address: transfer.address,
          requestId: transfer.requestId,
          txHash: transfer.txHash,
        },
        'deposit-address transfer decided; sweeping it',
      );
      crashPoint(ctx.config.crashAt, 'transfer-decided');
    }
    if (transfer.status === 'sweeping') await sweep(transfer);
  }

  /**
   * A strict address's transfer that pays its waiting order in full, in the quoted currency: the order was quoted
   * at that amount, so it is swept whatever it is worth.
   */
  async function paysOrderInFull(address: DepositAddressRecord, transfer: TransferRecord): Promise<boolean> {
    if (address.type !== 'strict' || transfer.token.toLowerCase() !== address.currency.toLowerCase()) return false;
    const request = await getRequest(db, address.requestId);
    return (
      request !== undefined &&
      request.status === 'waiting' &&
      request.originChainId === transfer.chainId &&
      transfer.amount >= request.amountIn
    );
  }

  /** Whether `total` (this transfer and the dust before it) is worth the one sweep that would move it. */
  async function worthSweeping(
    address: DepositAddressRecord,
    transfer: TransferRecord,
    total: bigint,
  ): Promise<boolean> {
    const minimum = await minimumWorthSweeping(ctx, address, {
      sweepId: sweepIdOf(transfer.chainId, transfer.txHash, transfer.logIndex),
      token: transfer.token,
      amount: total,
      depositor: transfer.depositor,
    });
    return total >= minimum;
  }

  async function decide(
    address: DepositAddressRecord,
    transfer: TransferRecord,
  ): Promise<{ requestId: string | null; supersedesRequestId: string | null; sweepId: Hex; legs: SweepLeg[] }> {
    const sweepId = sweepIdOf(transfer.chainId, transfer.txHash, transfer.logIndex);
    const refundTarget =
      address.refundTo === null || address.refundTo === zeroAddress ? transfer.depositor : address.refundTo;
    const sameCurrency = transfer.token.toLowerCase() === address.currency.toLowerCase();
    if (address.type === 'strict') {
      const request = await getRequest(db, address.requestId);
      await fillInRefundTo(db, address.requestId, transfer.depositor);
      const id = address.requestId;
      if (request !== undefined && sameCurrency && request.status === 'waiting' && transfer.amount > request.amountIn) {
        return {
          requestId: id,
          supersedesRequestId: null,
          sweepId,
          legs: [
            { id, depositor: refundTarget, amount: request.amountIn },
            { id, depositor: refundTarget, amount: transfer.amount - request.amountIn },
          ],
        };
      }
      return {
        requestId: id,
        supersedesRequestId: null,
        sweepId,
        legs: [{ id, depositor: refundTarget, amount: transfer.amount }],
      };
    }
    // Open: the address's first quote when this transfer is exactly it and it still waits, else a re-quote.
    const first = await getRequest(db, address.requestId);
    const used = (await listTransfers(db, { chainId: transfer.chainId, address: transfer.address })).some(
      (other) =>
        other.id !== transfer.id &&
        (other.requestId === address.requestId || other.supersedesRequestId === address.requestId),
    );
    const firstWaits = first !== undefined && first.status === 'waiting' && !used && ctx.now() <= first.expiresAt;
    if (firstWaits && sameCurrency && transfer.amount === first.amountIn) {
      await fillInRefundTo(db, first.id, transfer.depositor);
      return {
        requestId: first.id,
        supersedesRequestId: null,
        sweepId,
        legs: [{ id: first.id, depositor: refundTarget, amount: transfer.amount }],
      };
    }
    const terms = address.params as {
      recipient: string;
      destinationChainId: number;
      destinationCurrency: string;
      slippageTolerance: string | null;
      referrer: string | null;
      appFees: Array<{ recipient: string; fee: string }>;
    };
    try {
      const quote = await getQuote(
        ctx,
        {
          user: transfer.depositor,
          recipient: terms.recipient,
          originChainId: transfer.chainId,
          destinationChainId: terms.destinationChainId,
          originCurrency: transfer.token,
          destinationCurrency: terms.destinationCurrency,
          amount: transfer.amount,
          tradeType: 'EXACT_INPUT',
          refundTo: refundTarget,
          ...(terms.slippageTolerance === null ? {} : { slippageTolerance: terms.slippageTolerance }),
          ...(terms.referrer === null ? {} : { referrer: terms.referrer }),
          ...(terms.appFees.length === 0 ? {} : { appFees: terms.appFees }),
        },
        { apiKey: null },
      );
      await linkRequestToAddress(db, quote.requestId, address.address);
      return {
        requestId: quote.requestId,
        supersedesRequestId: firstWaits ? first.id : null,
        sweepId,
        legs: [{ id: quote.requestId, depositor: refundTarget, amount: transfer.amount }],
      };
    } catch (error) {
      if (!isGatewayError(error)) throw error;
      // Not quotable (too small for the fees, a route gone): refunded to its depositor as a deposit of no request.
      log.warn(
        {
          chainId: transfer.chainId,
          address: transfer.address,
          txHash: transfer.txHash,
          code: error.code,
          reason: error.message,
        },
        'open deposit-address transfer could not be re-quoted; refunding it',
      );
      const id = refundOnlyIdOf(sweepId);
      return {
        requestId: null,
        supersedesRequestId: null,
        sweepId,
        legs: [{ id, depositor: refundTarget, amount: transfer.amount }],
      };
    }
  }

  async function sweep(transfer: TransferRecord): Promise<void> {
    const sweepId = transfer.sweepId as Hex;
    const chain = requireChain(ctx, transfer.chainId);
    const address = await getDepositAddress(db, transfer.chainId, transfer.address);
    if (address === undefined || chain.contracts.depositAddressFactory === undefined) return;
    const sender = senderOf(transfer.chainId);
    let record = await getLiveOutgoingTx(db, sweepId, 'sweep');
    if (record === undefined) {
      if (await isSwept(transfer.chainId, sweepId)) {
        await markSwept(transfer);
        return;
      }
      record = await sender.send({
        requestId: sweepId,
        kind: 'sweep',
        to: chain.contracts.depositAddressFactory,
        data: encodeFunctionData({
          abi: depositAddressFactoryAbi,
          functionName: 'sweep',
          args: [
            address.saltKey as Hex,
            (address.recoveryAddress ?? zeroAddress) as Address,
            sweepId,
            transfer.token as Address,
            (transfer.legs ?? []).map((leg) => ({
              id: leg.id as Hex,
              depositor: leg.depositor as Address,
              amount: leg.amount,
            })),
          ],
        }),
        value: 0n,
      });
    }
    const receipt = await sender.waitForReceipt(record.id);
    if (receipt.status === 'success' || (await isSwept(transfer.chainId, sweepId))) {
      await markSwept(transfer);
      return;
    }
    log.error(
      { chainId: transfer.chainId, address: transfer.address, txHash: transfer.txHash, sweepTx: receipt.hash },
      'sweep reverted (the funds left the address by recovery?); an operator must look',
    );
    await updateTransfer(db, transfer.id, { status: 'held', fromStatus: 'sweeping', now: ctx.now() });
  }

  async function markSwept(transfer: TransferRecord): Promise<void> {
    await updateTransfer(db, transfer.id, { status: 'swept', fromStatus: 'sweeping', now: ctx.now() });
    log.info(
      { chainId: transfer.chainId, address: transfer.address, requestId: transfer.requestId },
      'deposit-address transfer swept',
    );
  }

  return {
    handleTransfer(transfer) {
      enqueue(`${transfer.chainId}:${transfer.address}`, () => process(transfer.id));
    },
    async idle() {
      while (lanes.size > 0) await Promise.all([...lanes.values()]);
    },
    async stop() {
      stopped = true;
      await Promise.all([...lanes.values()]);
    },
  };
}

/** A dust transfer this decision counted was taken along by another decision first. */
class DustMoved extends Error {
  constructor() {
    super('a dust transfer moved on while the decision was made');
  }
}
