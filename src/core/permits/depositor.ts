import type { Hex } from 'viem';
import { getLiveOutgoingTx } from '../../store/outgoingTxs.repository.js';
import { finishPermit, getPermit, listAcceptedPermits } from '../../store/permits.repository.js';
import { getRequest, updateRequestStatus } from '../../store/requests.repository.js';
import { requireChain } from '../chains/requireChain.js';
import type { CoreContext } from '../context.js';
import { isGatewayError } from '../errors.js';
import { crashPoint } from '../faults.js';
import type { DepositWatcher, TransactionSender } from '../ports/solver.js';
import type { PermitDepositor } from '../ports/permits.js';
import { moveOf } from '../vocabulary/statusMachine.js';
import { createSleeper } from '../sleeper.js';
import { permitNonceUsed, storedPermitOf } from './depositPermit.js';

export interface CreatePermitDepositorParameters {
  ctx: CoreContext;
  senders: ReadonlyMap<number, TransactionSender>;
  watchers: ReadonlyMap<number, DepositWatcher>;
  /** Waits between attempts after an error (an RPC failure); default 1 s doubling to 30 s. */
  retryDelayMs?: (attempt: number) => number;
}

export interface RunningPermitDepositor extends PermitDepositor {
  /** After a restart: submits every permit accepted but not mined (its recorded transaction, or a new one). */
  recover(): Promise<void>;
  stop(): Promise<void>;
}

const ATTEMPTS = 10;

/** Blocks a permit must outlive when its deposit is sent: the deposit's own inclusion. */
const INCLUSION_BLOCKS = 3;
/** Seconds a permit must outlive when its deposit is sent, whatever the chain's block time. */
const MIN_INCLUSION_SECONDS = 3;

/**
 * Sends the deposits of accepted permits from the solver's origin sender, exactly once per request: the
 * `outgoing_txs` row (one live `deposit` per request) is recorded before the broadcast, a second submit finds
 * it and waits for it instead, and a restart resumes every `accepted` permit from what was recorded. Once mined,
 * the deposit is indexed at once (the watcher would also find it); the solver then moves the request
 * `depositing -> pending` as for any deposit. A deposit that reverts leaves the permit `failed` and the
 * request `waiting` again (the user's funds did not move).
 *
 * The permit is accepted some time before its deposit is sent (a queue, a retry, a restart), and its user can
 * spend its nonce or move the amount away meanwhile: right before sending, the chain is read again (the deadline
 * with room for inclusion, the nonce, the balance), and a permit that would revert is not sent. It ends like a
 * reverted one (the permit `failed`, the request `waiting`), with no gas spent by the solver.
 */
export function createPermitDepositor({
  ctx,
  senders,
  watchers,
  retryDelayMs = (attempt) => Math.min(30_000, 1_000 * 2 ** (attempt - 1)),
}: CreatePermitDepositorParameters): RunningPermitDepositor {
  const { db, log } = ctx;
  const lanes = new Map<string, Promise<void>>();
  let stopped = false;
  const { sleep, wakeAll } = createSleeper();

  async function deposit(requestId: Hex): Promise<void> {
    const permit = await getPermit(db, requestId);
    if (permit === undefined || permit.status !== 'accepted') return;
    crashPoint(ctx.config.crashAt, 'permit-accepted');
    const sender = senders.get(permit.chainId);
    if (sender === undefined) throw new Error(`no sender for chain ${permit.chainId}`);
    let tx = await getLiveOutgoingTx(db, requestId, 'deposit');
    if (tx === undefined) {
      const stale = await staleReason(requestId);
      if (stale !== undefined) {
        await db.transaction().execute(async (trx) => {
          await finishPermit(trx, requestId, 'failed', ctx.now());
          await updateRequestStatus(trx, requestId, { ...moveOf('abandonDeposit'), now: ctx.now() });
        });
        log.warn({ requestId, reason: stale }, 'permit no longer valid on chain; its deposit is not sent');
        return;
      }
      try {
        tx = await sender.send({
          requestId,
          kind: 'deposit',
          to: permit.call.to as Hex,
          data: permit.call.data as Hex,
          value: 0n,
          gas: BigInt(permit.call.gas),
        });
      } catch (error) {
        // Recorded by an earlier attempt that did not return (another instance, a retry): wait for that one.
        const live =
          isGatewayError(error) && error.code === 'CONFLICT'
            ? await getLiveOutgoingTx(db, requestId, 'deposit')
            : undefined;
        if (live === undefined) throw error;
        tx = live;
      }
    }
    const receipt = await sender.waitForReceipt(tx.id);
    if (receipt.status === 'success') {
      await finishPermit(db, requestId, 'submitted', ctx.now());
      log.info({ requestId, txHash: receipt.hash }, 'permit deposit mined');
      await watchers
        .get(permit.chainId)
        ?.indexTransaction(receipt.hash)
        .catch((error: unknown) =>
          log.warn({ err: error, requestId }, 'indexing the permit deposit failed; the watcher finds it'),
        );
      return;
    }
    await db.transaction().execute(async (trx) => {
      await finishPermit(trx, requestId, 'failed', ctx.now());
      await updateRequestStatus(trx, requestId, { ...moveOf('abandonDeposit'), now: ctx.now() });
    });
    log.warn({ requestId, txHash: receipt.hash }, 'permit deposit reverted; the request is waiting again');
  }

  /**
   * Why the permit would make its deposit revert now (`EXPIRED`, `NONCE_USED`, `BALANCE_TOO_LOW`), or undefined
   * when it can still be redeemed. An RPC failure throws: the attempt is retried, nothing is sent.
   */
  async function staleReason(requestId: Hex): Promise<string | undefined> {
    const request = await getRequest(db, requestId);
    const permit = request === undefined ? undefined : storedPermitOf(request);
    const chain = ctx.permitChain;
    if (request === undefined || permit === undefined || chain === undefined) {
      throw new Error(`the permit of request ${requestId} cannot be checked on chain`);
    }
    const margin = BigInt(
      Math.max(MIN_INCLUSION_SECONDS, Math.ceil(INCLUSION_BLOCKS * requireChain(ctx, permit.chainId).blockTime)),
    );
    const expiry = BigInt(permit.expiry);
    const requestUntil = BigInt(Math.floor(request.expiresAt / 1000));
    const until = expiry < requestUntil ? expiry : requestUntil;
    if (until - BigInt(Math.floor(ctx.now() / 1000)) < margin) return 'EXPIRED';
    if (await permitNonceUsed(chain, permit)) return 'NONCE_USED';
    if ((await chain.balance(permit.chainId, permit.token, permit.owner)) < BigInt(permit.value)) {
      return 'BALANCE_TOO_LOW';
    }
    return undefined;
  }

  async function withRetries(requestId: Hex): Promise<void> {
    for (let attempt = 1; !stopped; attempt++) {
      try {
        await deposit(requestId);
        return;
      } catch (error) {
        if (attempt >= ATTEMPTS || stopped) {
          log.error({ err: error, requestId }, 'permit deposit failed; it is retried after a restart');
          return;
        }
        log.warn({ err: error, requestId, attempt }, 'permit deposit failed; retrying');
        await sleep(retryDelayMs(attempt));
      }
    }
  }

  function submit(requestId: Hex): void {
    if (stopped) return;
    const key = requestId.toLowerCase();
    const previous = lanes.get(key) ?? Promise.resolve();
    const next = previous.then(() => withRetries(requestId));
    lanes.set(key, next);
    void next.finally(() => {
      if (lanes.get(key) === next) lanes.delete(key);
    });
  }

  return {
    submit,
    async recover() {
      const accepted = await listAcceptedPermits(db);
      if (accepted.length > 0) log.info({ count: accepted.length }, 'resuming accepted permit deposits');
      for (const permit of accepted) submit(permit.requestId as Hex);
    },
    async stop() {
      stopped = true;
      wakeAll();
      await Promise.all([...lanes.values()]);
    },
  };
}
