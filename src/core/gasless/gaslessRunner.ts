import type { Hex } from 'viem';
import {
  deleteGaslessSubmission,
  getGaslessSubmission,
  listDepositingGaslessSubmissions,
} from '../../store/gaslessSubmissions.repository.js';
import { returnSponsorship } from '../../store/apiKeys.repository.js';
import { setCommittedOutflow } from '../../store/committedOutflow.repository.js';
import { recordExecutionRevert } from '../../store/executionReverts.repository.js';
import { getLiveOutgoingTx, updateOutgoingTx } from '../../store/outgoingTxs.repository.js';
import type { OutgoingTxRecord } from '../../records/outgoingTx.js';
import { updateRequestStatus } from '../../store/requests.repository.js';
import type { CoreContext } from '../context.js';
import { committedOutflow } from '../fill/fillOutflow.js';
import { GatewayError, isGatewayError } from '../errors.js';
import type { GaslessLifecycle, TransactionSender } from '../ports/solver.js';
import type { GaslessPayload } from './executeGasless.js';
import { moveOf } from '../vocabulary/statusMachine.js';

/**
 * Sends accepted gasless batches (`executeGasless`) from the solver's sender of their chain and follows them:
 *
 * - `send` is idempotent: a batch with a live `gasless` outgoing row is not sent again (the sender records a row
 *   before broadcasting and allows one live row per request and kind). A node's outright refusal (nothing
 *   broadcast) puts the request back to `waiting` with its output restored and forgets the submission, so the
 *   user can try again; the refusal is answered to the caller.
 * - Once mined, the receipt is indexed at once (the deposit watcher would find it too), which moves the request
 *   `depositing -> pending` and on to the fill. A batch that passed simulation but reverts on chain (state moved
 *   before it was mined) deposited nothing and is never filled: the request goes back to `waiting`, payable again,
 *   with its output restored; the solver paid that gas, which the sender wrote to the ledger (`gas_spent`, naming
 *   the request) with the receipt, and the outgoing row keeps its hash. A sponsor's draw for it is kept. The revert is
 *   recorded against the batch's user and API key, which are refused further batches and call quotes for a while
 *   (`src/core/limits/executionReverts.ts`): the batch moved nothing of theirs the solver could keep.
 * - `recover` (at start, after the senders rebroadcast what they recorded and before the watchers run) sends
 *   every accepted batch whose request is still `depositing` and has no live row: a crash between accepting and
 *   sending sends it once.
 */
export function createGaslessRunner({
  ctx,
  senders,
}: {
  ctx: CoreContext;
  senders: ReadonlyMap<number, TransactionSender>;
}): GaslessLifecycle & { recover(): Promise<void>; stop(): Promise<void> } {
  const { db, log } = ctx;
  const follows = new Map<string, Promise<void>>();
  let stopped = false;

  async function send(requestId: Hex): Promise<OutgoingTxRecord> {
    const submission = await getGaslessSubmission(db, requestId);
    if (submission === undefined) throw new GatewayError('NOT_FOUND', `No gasless batch for request ${requestId}`);
    const payload = submission.payload as unknown as GaslessPayload;
    const sender = senders.get(submission.chainId);
    if (sender === undefined) throw new GatewayError('SERVICE_UNAVAILABLE', `No sender on chain ${submission.chainId}`);
    let record = await getLiveOutgoingTx(db, requestId, 'gasless');
    if (record === undefined) {
      try {
        record = await sender.send({
          requestId,
          kind: 'gasless',
          to: payload.to,
          data: payload.data,
          value: 0n,
          gas: BigInt(payload.gas),
          ...(payload.authorizationList === undefined ? {} : { authorizationList: payload.authorizationList }),
        });
      } catch (error) {
        if (
          isGatewayError(error) &&
          (error.code === 'DESTINATION_TX_FAILED' || error.code === 'INSUFFICIENT_LIQUIDITY')
        ) {
          await retire(requestId, payload, error.message, false);
        }
        throw error;
      }
    }
    if (record.status === 'failed' && record.nonce === null) {
      await retire(requestId, payload, 'the node refused the batch', false);
      throw new GatewayError('SERVICE_UNAVAILABLE', 'The node refused the gasless batch; nothing was sent');
    }
    follow(requestId, submission.chainId, record.id);
    return record;
  }

  /**
   * A batch that never reached the chain (`mined` false), or was mined and reverted there: in one transaction its
   * outgoing row stops being live (it keeps its hashes; the sender already wrote the gas of a mined one to the
   * ledger), the request waits for its deposit again with its output restored and no actual fees, and the
   * submission is forgotten, so the user can pay again. A sponsored batch that never reached the chain gives its
   * draw back to the key; a mined one keeps it (its gas was spent).
   */
  async function retire(
    requestId: string,
    payload: GaslessPayload,
    why: string,
    mined: { hash: string } | false,
  ): Promise<void> {
    await db.transaction().execute(async (trx) => {
      const row = await getLiveOutgoingTx(trx, requestId, 'gasless');
      if (row !== undefined && (row.status === 'failed' || row.status === 'confirmed'))
        await updateOutgoingTx(trx, row.id, { status: 'replaced', now: ctx.now() });
      const submission = await getGaslessSubmission(trx, requestId);
      if (mined && submission !== undefined) {
        // The batch passed its simulation and reverted once mined: its requester is refused for a while.
        await recordExecutionRevert(trx, {
          chainId: submission.chainId,
          txHash: mined.hash,
          kind: 'gasless',
          requestId,
          user: submission.user,
          apiKeyId: submission.apiKeyId,
          createdAt: ctx.now(),
        });
      }
      if (!mined && submission?.apiKeyId != null && submission.sponsoredUsdMicros > 0n)
        await returnSponsorship(trx, submission.apiKeyId, submission.sponsoredUsdMicros);
      const restored = await updateRequestStatus(trx, requestId, {
        ...moveOf('abandonDeposit'),
        amountOut: BigInt(payload.quotedAmountOut),
        feesActual: null,
        now: ctx.now(),
      });
      // The quoted output is back: so is what its fill would take from the solver.
      if (restored !== null) await setCommittedOutflow(trx, requestId, committedOutflow(restored));
      await deleteGaslessSubmission(trx, requestId);
    });
    log.warn(
      { requestId, why },
      mined
        ? 'gasless batch reverted on chain (the solver paid its gas, recorded in the ledger); the request is waiting again'
        : 'gasless batch not sent; the request is waiting again',
    );
  }

  function follow(requestId: string, chainId: number, outgoingTxId: number): void {
    if (follows.has(requestId) || stopped) return;
    const work = (async () => {
      const sender = senders.get(chainId)!;
      const receipt = await sender.waitForReceipt(outgoingTxId);
      if (receipt.status !== 'success') {
        const submission = await getGaslessSubmission(db, requestId);
        if (submission !== undefined)
          await retire(
            requestId,
            submission.payload as unknown as GaslessPayload,
            `the batch reverted on chain (${receipt.hash})`,
            { hash: receipt.hash },
          );
        return;
      }
      log.info({ requestId, chainId, hash: receipt.hash }, 'gasless batch mined');
      await ctx.solving.running?.watchers
        .get(chainId)
        ?.indexTransaction(receipt.hash)
        .catch((error: unknown) =>
          log.warn({ err: error, requestId }, 'indexing the gasless batch failed; the deposit watcher will find it'),
        );
    })()
      .catch((error: unknown) => {
        if (!stopped) log.error({ err: error, requestId }, 'following a gasless batch failed; a restart resumes it');
      })
      .finally(() => follows.delete(requestId));
    follows.set(requestId, work);
  }

  return {
    send,
    async recover() {
      for (const submission of await listDepositingGaslessSubmissions(db)) {
        await send(submission.requestId as Hex).catch((error: unknown) =>
          log.error({ err: error, requestId: submission.requestId }, 'resuming a gasless batch failed'),
        );
      }
    },
    async stop() {
      stopped = true;
      await Promise.allSettled(follows.values());
    },
  };
}
