import type { LocalAccount } from 'viem';
import { depositAddressFactoryAbi } from '../../generated/contracts/index.js';
import { createDepositAddressWatcher, type DepositAddressWatcher } from '../chain/depositAddressWatcher.js';
import { createDepositWatcher } from '../chain/depositWatcher.js';
import { DEPOSIT_ADDRESSES_CHANNEL } from '../store/depositAddresses.repository.js';
import { createDepositAddressProcessor, type DepositAddressProcessor } from '../core/depositAddresses/processor.js';
import type { ChainClients } from '../chain/clients.js';
import { createHeadFeed, type HeadFeed } from '../chain/heads.js';
import { createTransactionSender } from '../chain/sender.js';
import type { CoreContext } from '../core/context.js';
import type { DepositWatcher, TransactionSender } from '../core/ports/solver.js';
import {
  createSettler,
  defaultSettlementSettings,
  type SettlementSettings,
  type Settler,
} from '../core/settlement/settler.js';
import { createClaimPayer, type ClaimPayer } from '../core/appFees/claimPayer.js';
import {
  createReconciler,
  defaultReconciliationSettings,
  type ReconciliationSettings,
  type Reconciler,
} from '../core/reconciliation/reconciler.js';
import { createOrderTruth } from '../chain/orderTruth.js';
import {
  createSwapBack,
  defaultSwapBackSettings,
  type SwapBack,
  type SwapBackSettings,
} from '../core/inventory/swapBack.js';
import { createSolverKeyWatch, type SolverKeyWatch } from '../chain/keyWatch.js';
import { findUnknownInFlight, findUnknownSolverHistory } from '../chain/solverHistory.js';
import { createSleeper } from '../core/sleeper.js';
import { createSolverStateReader } from '../chain/solverState.js';
import { recordSolverNonce } from '../store/solverNonces.repository.js';
import { createSolver, type Solver } from '../core/solver/solver.js';
import { createPermitDepositor, type RunningPermitDepositor } from '../core/permits/depositor.js';
import { createGaslessRunner } from '../core/gasless/gaslessRunner.js';
import {
  createRequestRetention,
  defaultRequestRetentionSettings,
  type RequestRetention,
  type RequestRetentionSettings,
} from '../core/requests/retention.js';

export interface SolverRuntime {
  solver: Solver;
  watchers: ReadonlyMap<number, DepositWatcher>;
  /** Per chain with a deposit-address factory: finds plain transfers to deposit addresses. */
  addressWatchers: ReadonlyMap<number, DepositAddressWatcher>;
  /** Decides and sweeps deposit-address transfers into the depository. */
  depositAddresses: DepositAddressProcessor;
  senders: ReadonlyMap<number, TransactionSender>;
  /** The pushed-head feed of each chain configured with `pushHeads`; started by `start`, stopped by `stop`. */
  heads: ReadonlyMap<number, HeadFeed>;
  /** Releases filled deposits to the solver, batched (`src/core/settlement/settler.ts`). */
  settler: Settler;
  /** Pays authorized app-fee claims (`src/core/appFees/claimPayer.ts`), on the settlement interval or when woken. */
  claimPayer: ClaimPayer;
  /** Compares the ledger's solver holdings with the chains (`src/core/reconciliation/reconciler.ts`). */
  reconciler: Reconciler;
  /** Sells surpluses above their targets back through the pools (`src/core/inventory/swapBack.ts`). */
  swapBack: SwapBack;
  /** Watches for transactions of the solver key that this gateway did not send (`src/chain/keyWatch.ts`). */
  keyWatch: SolverKeyWatch;
  /**
   * Removes never-paid requests after their refund window and the retention (`src/core/requests/retention.ts`).
   * It runs with the solver, which refunds a deposit that still arrives for a removed request as unknown, and
   * so in one instance at a time.
   */
  retention: RequestRetention;
  /** Sends the deposits of accepted permits (`POST /execute/permits`) from the origin chains' senders. */
  permitDepositor: RunningPermitDepositor;
  /** Sends and follows gasless batches (`POST /execute`). */
  gasless: ReturnType<typeof createGaslessRunner>;
  /**
   * Per chain where the database did not know transactions the solver key made: the rebuild from chain events, under
   * way (`ok: false`) or done (`ok: true`), for `/ready`.
   */
  history(): ReadonlyMap<number, { ok: boolean; message: string }>;
  /**
   * Recovers what a previous run left in flight, then follows every chain's deposits. A chain whose solver nonce is
   * ahead of the database is first read again from its `deploymentBlock` (deposits, with the fills and releases the
   * chain records); without one the solver does not start (throws, naming the chain).
   */
  start(): Promise<void>;
  /** Stops following chains, lets running work finish, stops the senders. */
  stop(): Promise<void>;
}

/**
 * The solver's moving parts for every configured chain: a sender that owns the solver's nonce, a deposit
 * watcher that hands confirmed deposits to the solver, and the solver itself.
 */
export function createSolverRuntime(
  ctx: CoreContext,
  clients: ChainClients,
  account: LocalAccount,
  options: {
    settlement?: SettlementSettings | undefined;
    retention?: RequestRetentionSettings | undefined;
    reconciliation?: ReconciliationSettings | undefined;
    swapBack?: SwapBackSettings | undefined;
    /**
     * PGlite's LISTEN on this process's own commits (`Database.listen`): the deposit-address watchers then read new
     * addresses only when one is created (`onAddressCreated`). Absent on PostgreSQL.
     */
    listen?: ((channel: string, onNotification: (payload: string) => void) => Promise<() => void>) | undefined;
    /**
     * Whether the solver follows a chain: a chain the start-up checks took out of service (another network
     * behind its RPC, contracts not the solver's) has no watchers and its sender does not recover; all when absent.
     */
    served?: ((chainId: number) => boolean) | undefined;
    /**
     * The solver key is used on `chainId` by another gateway (`src/chain/keyWatch.ts`): the runtime has stopped
     * sending and following deposits there; the caller takes the chain out of service (quotes, fills, `/ready`).
     */
    onSharedKey?: ((chainId: number, message: string) => void) | undefined;
    /** How often the key watch looks at each chain, ms (`createSolverKeyWatch`); tests shorten it. */
    keyWatchIntervalMs?: number | undefined;
  } = {},
): SolverRuntime {
  const listen = options.listen;
  const served = options.served ?? (() => true);
  const followed = ctx.config.chains.filter((chain) => served(chain.id));
  /** Chains where the key watch found another gateway using the solver key: nothing more is sent there. */
  const sharedKey = new Set<number>();
  // Asked on every pass of the background jobs: a chain the checks take out of service later is skipped from then.
  const inService = (chainId: number): boolean => served(chainId) && !sharedKey.has(chainId);
  const client = (chainId: number) => {
    const found = clients.get(chainId);
    if (found === undefined) throw new Error(`no client for chain ${chainId}`);
    return found;
  };
  // New heads pushed by each chain's node wake the watcher and the receipt waits (`src/chain/heads.ts`).
  const heads = new Map<number, HeadFeed>(
    followed
      .filter((chain) => chain.pushHeads === true)
      .map((chain) => [chain.id, createHeadFeed({ chainId: chain.id, url: chain.wsRpcUrl, log: ctx.log })]),
  );
  const senders = new Map<number, TransactionSender>(
    ctx.config.chains.map((chain) => [
      chain.id,
      createTransactionSender({
        chain,
        client: client(chain.id),
        account,
        db: ctx.db,
        log: ctx.log,
        now: ctx.now,
        crashAt: ctx.config.crashAt,
        heads: heads.get(chain.id),
        nativeUsdPrice: () => ctx.market.usdPrice(chain.id, chain.nativeCurrency),
        onForeignNonce: (nonce) => keyWatch.foreignNonce(chain.id, nonce),
      }),
    ]),
  );
  const truth = createOrderTruth(ctx.config.chains, clients);
  const solver = createSolver({ ctx, senders, truth });
  const gasless = createGaslessRunner({ ctx, senders });
  const settler = createSettler({
    ctx,
    senders,
    settings: options.settlement ?? defaultSettlementSettings,
    truth,
    inService,
  });
  const claimPayer = createClaimPayer({
    ctx,
    senders,
    intervalMs: (options.settlement ?? defaultSettlementSettings).intervalMs,
    inService,
  });
  const swapBack = createSwapBack({
    ctx,
    senders,
    settings: options.swapBack ?? defaultSwapBackSettings,
    inService,
  });
  const reconciler = createReconciler({
    ctx,
    reader: createSolverStateReader(clients, account.address),
    settings: options.reconciliation ?? defaultReconciliationSettings,
    inService,
  });
  /**
   * The ledger after a rebuild: the gas and releases of transactions this database never recorded are booked from
   * the chain (`Reconciler.rebase`), tried while transactions are in flight for a while, then left to the drift
   * the reconciliation reports.
   */
  async function rebaseLedger(chainId: number, chainNonce: bigint): Promise<void> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const result = await reconciler.rebase(chainId, `nonce-${chainNonce}`);
      if (result.outcome === 'settled') return;
    }
    ctx.log.warn(
      { chainId },
      'after the rebuild the ledger could not be compared (transactions in flight): the reconciliation reports as drift what the database did not know',
    );
  }
  const retention = createRequestRetention(ctx, options.retention ?? defaultRequestRetentionSettings);
  /**
   * Where a chain's deposit watcher starts on a database that never followed it, when the chain is rebuilt (else its
   * `deploymentBlock`, else its head).
   */
  const rebuildFrom = new Map<number, bigint>();
  const history = new Map<number, { ok: boolean; message: string }>();
  /** Ends the start's wait for transactions in flight when the runtime stops. */
  const startWait = createSleeper();
  let stopping = false;

  /**
   * Transactions of the solver key in flight (in a node's pool, not mined) that the database does not know: a fill or
   * a refund a run whose database was lost, or restored from an older backup, broadcast before it died. Nothing is
   * decided until the chain has mined them (or its node dropped them): a deposit decided meanwhile would be filled a
   * second time (the second fill reverts once the first lands) or refunded (a simulation against the pool says it is
   * filled, the mined state says not yet), and the user paid twice. Once mined, they are the solver key's history the
   * rebuild from chain events reads. Returns false when the runtime stops while waiting.
   */
  async function awaitUnknownInFlight(): Promise<boolean> {
    const waited = new Set<number>();
    for (;;) {
      if (stopping) return false;
      const inFlight = await findUnknownInFlight(followed, clients, ctx.db, account.address);
      for (const chainId of waited)
        if (!inFlight.some((entry) => entry.chainId === chainId)) {
          waited.delete(chainId);
          history.delete(chainId);
          ctx.log.warn({ chainId }, 'the transactions of the solver key in flight are mined or dropped: solving');
        }
      if (inFlight.length === 0) return true;
      for (const entry of inFlight) {
        if (waited.has(entry.chainId)) continue;
        waited.add(entry.chainId);
        const count = entry.pending - (entry.mined > entry.knownNonce ? entry.mined : entry.knownNonce);
        const message = `${count} transaction(s) of the solver key in flight on chain ${entry.chainId} that the database does not know: the solver waits until they are mined`;
        history.set(entry.chainId, { ok: false, message });
        ctx.log.warn(
          {
            chainId: entry.chainId,
            mined: entry.mined.toString(),
            pending: entry.pending.toString(),
            knownNonce: entry.knownNonce.toString(),
          },
          'transactions of the solver key in flight that the database does not know: waiting for them to be mined before solving',
        );
      }
      // Looked at again twice a block time of the fastest chain waited for (0.2 s to 5 s).
      const blockTimes = followed.filter((chain) => waited.has(chain.id)).map((chain) => chain.blockTime);
      await startWait.sleep(Math.min(5_000, Math.max(200, Math.min(...blockTimes) * 500)));
    }
  }
  // Another gateway with the solver key and a database of its own would refund the deposits of requests it does not
  // know while this one fills them, and the other way round: on the first sign of it, nothing more is sent or
  // followed on that chain until the operator has stopped the other and restarted this one.
  const keyWatch = createSolverKeyWatch({
    chains: followed,
    clients,
    db: ctx.db,
    solver: account.address,
    log: ctx.log,
    now: ctx.now,
    intervalMs: options.keyWatchIntervalMs,
    onShared: (chainId, message) => {
      sharedKey.add(chainId);
      void watchers.get(chainId)?.stop();
      void addressWatchers.get(chainId)?.stop();
      void senders.get(chainId)?.stop();
      options.onSharedKey?.(chainId, message);
    },
  });
  const watchers = new Map<number, DepositWatcher>(
    followed.map((chain) => [
      chain.id,
      createDepositWatcher({
        chain,
        client: client(chain.id),
        db: ctx.db,
        log: ctx.log,
        now: ctx.now,
        heads: heads.get(chain.id),
        metrics: ctx.metrics,
        solverAddress: ctx.solver.address,
        // A database that never followed the chain reads it from the deployment (when configured), not from the
        // head: deposits made while no gateway ran (the solver key made no transaction since, so no rebuild is due)
        // are seen and decided.
        startBlock: () =>
          rebuildFrom.get(chain.id) ??
          (chain.deploymentBlock === undefined ? undefined : BigInt(chain.deploymentBlock)),
        onConfirmed: (deposit, request) => solver.handleDeposit(deposit, request),
        onReorg: () => {
          senders
            .get(chain.id)
            ?.recheckMined()
            .catch((error: unknown) =>
              ctx.log.warn({ chainId: chain.id, err: error }, 'after a reorg: re-checking mined transactions failed'),
            );
        },
      }),
    ]),
  );
  const permitDepositor = createPermitDepositor({ ctx, senders, watchers });
  const depositAddresses = createDepositAddressProcessor({
    ctx,
    senders,
    isSwept: (chainId, sweepId) => {
      const chain = ctx.config.chains.find((candidate) => candidate.id === chainId)!;
      return client(chainId).readContract({
        address: chain.contracts.depositAddressFactory!,
        abi: depositAddressFactoryAbi,
        functionName: 'swept',
        args: [sweepId],
      });
    },
  });
  const addressWatchers = new Map<number, DepositAddressWatcher>(
    followed
      .filter((chain) => chain.contracts.depositAddressFactory !== undefined)
      .map((chain) => [
        chain.id,
        createDepositAddressWatcher({
          chain,
          client: client(chain.id),
          db: ctx.db,
          log: ctx.log,
          now: ctx.now,
          heads: heads.get(chain.id),
          onAddressCreated:
            listen === undefined ? undefined : (listener) => listen(DEPOSIT_ADDRESSES_CHANNEL, () => listener()),
          onConfirmed: (transfer) => depositAddresses.handleTransfer(transfer),
        }),
      ]),
  );
  return {
    solver,
    heads,
    watchers,
    addressWatchers,
    depositAddresses,
    senders,
    settler,
    claimPayer,
    reconciler,
    swapBack,
    keyWatch,
    retention,
    permitDepositor,
    gasless,
    history: () => history,
    async start() {
      // The chain decides, the database remembers: transactions of the solver key in flight that the database does
      // not know are mined first, and a database that does not account for every transaction of the solver key is
      // rebuilt from chain events before the solver acts on it.
      if (!(await awaitUnknownInFlight())) return;
      const unknown = await findUnknownSolverHistory(followed, clients, ctx.db, account.address, (chainId, error) =>
        ctx.log.warn(
          { chainId, err: error },
          "the solver key's transaction count could not be read: the key watch compares it with the database once the chain answers",
        ),
      );
      for (const chain of unknown) {
        const what = `the database does not know ${chain.chainNonce - chain.knownNonce} transaction(s) the solver key made on chain ${chain.chainId}`;
        if (chain.fromBlock === undefined) {
          history.set(chain.chainId, { ok: false, message: `${what}; set deploymentBlock to rebuild` });
          throw new Error(
            `${what} (its nonce is ${chain.chainNonce}, the database accounts for ${chain.knownNonce}): the solver does ` +
              `not start on a database that may refund what was filled. Set the chain's deploymentBlock in the config ` +
              `file (npm run deploy prints it) so the gateway rebuilds from chain events, or use the database that key used`,
          );
        }
        rebuildFrom.set(chain.chainId, chain.fromBlock);
        history.set(chain.chainId, {
          ok: false,
          message: `${what}: rebuilding from chain events since block ${chain.fromBlock}; the solver waits`,
        });
        ctx.log.warn(
          {
            chainId: chain.chainId,
            chainNonce: chain.chainNonce,
            knownNonce: chain.knownNonce,
            fromBlock: chain.fromBlock,
          },
          'the database does not know transactions the solver key made: rebuilding from chain events before solving',
        );
      }
      for (const feed of heads.values()) feed.start();
      await Promise.all([...senders].filter(([chainId]) => served(chainId)).map(([, sender]) => sender.recover()));
      // Accepted gasless batches go out (once) before the watchers run, so their deposits find them depositing.
      await gasless.recover();
      await solver.recover();
      await permitDepositor.recover();
      // The opening balances (a chain the ledger has not followed yet) before new money moves.
      await reconciler.start();
      await settler.start();
      claimPayer.start();
      swapBack.start();
      retention.start();
      await Promise.all([...watchers.values()].map((watcher) => watcher.start()));
      await Promise.all([...addressWatchers.values()].map((watcher) => watcher.start()));
      if (unknown.length === 0) {
        await keyWatch.start();
        return;
      }
      // Every deposit since the deployment has been read and decided (filled ones kept, released ones left, the rest
      // refunded); the chain's count up to the check is now accounted for.
      await solver.idle();
      // A settlement pass before the ledger is rebased: a deposit the rebuild's requests owe the solver that the chain
      // shows released to it already (by the transactions this database did not know) is booked as settled first, so
      // the rebase books only what stays unattributed, and that release is not counted twice.
      await settler.settleNow();
      for (const chain of unknown) {
        await recordSolverNonce(ctx.db, {
          chainId: chain.chainId,
          signer: account.address,
          nonce: chain.chainNonce,
          now: ctx.now(),
        });
        history.set(chain.chainId, {
          ok: true,
          message: `rebuilt from chain events since block ${chain.fromBlock} at ${new Date(ctx.now()).toISOString()}: the database did not know ${chain.chainNonce - chain.knownNonce} transaction(s) of the solver key`,
        });
        ctx.log.warn({ chainId: chain.chainId }, 'rebuilt from chain events: the solver runs');
        await rebaseLedger(chain.chainId, chain.chainNonce);
      }
      await keyWatch.start();
    },
    async stop() {
      stopping = true;
      startWait.wakeAll();
      await keyWatch.stop();
      await Promise.all([...addressWatchers.values()].map((watcher) => watcher.stop()));
      await Promise.all([...watchers.values()].map((watcher) => watcher.stop()));
      // The senders stop together with the solver, not after it: a fill waiting for its receipt on a chain that
      // is gone (Ctrl-C reaches the anvils too) would otherwise hold the solver's lane, and this stop, forever.
      // The interrupted work is picked up again at the next start.
      // The background jobs are told first, so a pass whose receipt wait the senders' stop ends sees that it is
      // stopping (and says so in the log) rather than taking it for a failure.
      const jobsStopped = Promise.all([
        depositAddresses.stop(),
        gasless.stop(),
        settler.stop(),
        claimPayer.stop(),
        reconciler.stop(),
        swapBack.stop(),
        retention.stop(),
      ]);
      // Awaited below; handled now, as the awaits before it could let a rejection go unhandled.
      jobsStopped.catch(() => undefined);
      const sendersStopped = Promise.all([...senders.values()].map((sender) => sender.stop()));
      await Promise.all([solver.stop(), permitDepositor.stop()]);
      await jobsStopped;
      await sendersStopped;
      await Promise.all([...heads.values()].map((feed) => feed.stop()));
    },
  };
}
