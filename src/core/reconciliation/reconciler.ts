import type { Address } from 'viem';
import { getGenesisHash } from '../../store/chainGenesis.repository.js';
import { insertLedgerMovements } from '../../store/ledger.repository.js';
import { openingBalance, openingKey } from '../ledger/movements.js';
import {
  markReconciliationInFlight,
  readSolverLedgerSnapshot,
  saveReconciliations,
} from '../../store/reconciliations.repository.js';
import type { ReconciliationRecord } from '../../records/reconciliation.js';
import { chainCurrencies } from '../chains/requireChain.js';
import type { CurrencyConfig } from '../chains/types.js';
import type { CoreContext } from '../context.js';
import { toUsdMicros } from '../market.js';
import { createPeriodicJob } from '../periodicJob.js';
import { createServiceSkips } from '../chains/serviceSkips.js';
import { statusMoves } from '../vocabulary/statusMachine.js';

/** The solver's state on a chain at one block: what the reconciliation compares the ledger with. */
export interface SolverChainState {
  blockNumber: bigint;
  /** The solver's transaction count at that block: every nonce below it is mined. */
  nonce: bigint;
  /** Balance per currency (lower-case address; the zero address is the native currency) at that block. */
  balances: Map<string, bigint>;
}

/** Reads the solver's state at the chain's head (`src/chain/solverState.ts`). */
export interface SolverStateReader {
  read(chainId: number, currencies: readonly Address[]): Promise<SolverChainState>;
}

export interface ReconciliationSettings {
  /** How often every chain is reconciled, ms. */
  intervalMs: number;
}

export const defaultReconciliationSettings: ReconciliationSettings = { intervalMs: 300_000 };

/** What one pass over a chain found: compared (`settled`) or not, because something was in flight. */
export type ChainReconciliation =
  | { chainId: number; outcome: 'settled'; records: Omit<ReconciliationRecord, 'inFlightAt'>[]; opened: number }
  | { chainId: number; outcome: 'in-flight'; reason: string };

export interface Reconciler {
  /** Reconciles every chain once (taking the opening balances a chain lacks), then every `intervalMs`. */
  start(): Promise<void>;
  /** One pass over every chain now; resolves with what each chain found. */
  reconcileNow(): Promise<ChainReconciliation[]>;
  /**
   * After a rebuild from chain events (`tag` names it, once per chain and tag): the database missed transactions of
   * the solver key (the gas of fills and releases another database recorded, releases to the solver it made), so
   * what the chain holds beyond the ledger is booked as an `opening` movement of its own, as for a database that
   * never followed the chain, and logged. Compared when nothing is in flight, as a pass is; `in-flight` otherwise.
   */
  rebase(chainId: number, tag: string): Promise<ChainReconciliation>;
  stop(): Promise<void>;
}

/** Checks of a chain in one pass before it is left as in flight until the next interval. */
const attempts = 3;
const retryDelayMs = 500;

/**
 * The reconciliation job: compares the ledger's `solver` account with the solver's balance on chain, per chain
 * and currency, and reports the drift (`ledger_reconciliations`, read by `GET /admin/inventory` and the
 * `gateway_ledger_drift` gauge; a warning in the log when it is not zero). It runs with the solver, so on one
 * instance at a time (the solver's leader).
 *
 * The opening balance: the first settled check of a chain and currency writes what the chain holds and the
 * ledger does not know of as an `opening` movement against `equity:opening` (keyed by the chain's genesis hash,
 * so a restart or a new leader finds it written and a devnet reset opens again). From then on the ledger's
 * `solver` account is the solver's balance, and any difference is drift.
 *
 * In flight: the database is read first, in one snapshot, then the chain at its head (block B). The balance at B
 * includes exactly the solver's transactions with a nonce below the count at B. A check compares nothing (and is
 * retried, then left to the next interval) when one of them is not recorded as mined in that snapshot (its
 * receipt, and so its ledger entries, are not written yet), or when a fill is mined and its request not yet
 * `success` (the fill's entry comes with the status). A transaction broadcast and not mined at B is in neither
 * the chain's balance nor the ledger, so it is no drift. Deposits forwarded to the solver's wallet and seen but
 * not confirmed are on chain before the ledger has them: they are counted as `incoming`. What the solver's key
 * sends behind the gateway's back has no record at all, so it is drift, as it should be.
 */
export function createReconciler({
  ctx,
  reader,
  settings,
  inService,
}: {
  ctx: CoreContext;
  reader: SolverStateReader;
  settings: ReconciliationSettings;
  /**
   * Whether the solver serves the chain now: one out of service is not compared (its RPC may answer for another
   * network, or another gateway moves the key's money there) until it is back.
   */
  inService?: ((chainId: number) => boolean) | undefined;
}): Reconciler {
  const { db, log } = ctx;
  const skips = createServiceSkips({
    job: 'ledger reconciliation',
    inService,
    reason: (chainId) => ctx.chainStatus?.chainBlocked(chainId) ?? null,
    log,
  });
  const job = createPeriodicJob(settings.intervalMs, pass);

  async function usdOf(chainId: number, currency: CurrencyConfig, amount: bigint): Promise<bigint | null> {
    try {
      return toUsdMicros(amount, currency.decimals, await ctx.market.usdPrice(chainId, currency));
    } catch {
      return null;
    }
  }

  async function checkOnce(chainId: number, rebase?: string): Promise<ChainReconciliation> {
    const chain = ctx.config.chains.find((candidate) => candidate.id === chainId)!;
    const currencies = chainCurrencies(chain);
    const genesisHash = (await getGenesisHash(db, chainId)) ?? 'unrecorded';
    // A mined fill is in the ledger once its request moved to `success`: those still able to are not yet.
    const snapshot = await readSolverLedgerSnapshot(db, {
      chainId,
      signer: ctx.solver.address,
      awaitingSuccess: statusMoves.succeed.from,
    });
    const state = await reader.read(
      chainId,
      currencies.map((currency) => currency.address),
    );
    const unrecorded = snapshot.unminedNonces.filter((nonce) => nonce < state.nonce);
    if (unrecorded.length > 0)
      return {
        chainId,
        outcome: 'in-flight',
        reason: `${unrecorded.length} transaction(s) mined by block ${state.blockNumber} without a recorded receipt`,
      };
    if (snapshot.unfinishedFills > 0)
      return { chainId, outcome: 'in-flight', reason: `${snapshot.unfinishedFills} fill(s) mined, request not ended` };
    const checkedAt = ctx.now();
    let opened = 0;
    const records: Omit<ReconciliationRecord, 'inFlightAt'>[] = [];
    for (const currency of currencies) {
      const address = currency.address.toLowerCase();
      const onChain = state.balances.get(address) ?? 0n;
      let ledger = snapshot.ledger.get(address) ?? 0n;
      const incoming = snapshot.incoming.get(address) ?? 0n;
      if (!snapshot.openings.has(openingKey(chainId, address, genesisHash))) {
        const difference = onChain - ledger - incoming;
        const written = await insertLedgerMovements(
          db,
          [
            openingBalance({
              chainId,
              currency: address,
              genesisHash,
              difference,
              usdMicros: await usdOf(chainId, currency, difference),
            }),
          ],
          checkedAt,
        );
        // Written by another pass in between (it cannot be, with one solver; then compare at the next one).
        if (written === 0) return { chainId, outcome: 'in-flight', reason: 'opening balance written concurrently' };
        opened += 1;
        ledger += difference;
        log.info(
          { chainId, currency: currency.symbol, amount: difference.toString(), block: state.blockNumber.toString() },
          'ledger: opening balance of the solver taken from the chain',
        );
      }
      const missed = onChain - ledger - incoming;
      if (rebase !== undefined && missed !== 0n) {
        const movement = openingBalance({
          chainId,
          currency: address,
          genesisHash,
          difference: missed,
          usdMicros: await usdOf(chainId, currency, missed),
        });
        const key = `rebuild:${chainId}:${address}:${genesisHash.toLowerCase()}:${rebase}`;
        // Written already (a restart between the rebuild and its record): the snapshot holds it.
        if ((await insertLedgerMovements(db, [{ ...movement, key }], checkedAt)) > 0) {
          ledger += missed;
          log.warn(
            { chainId, currency: currency.symbol, amount: missed.toString(), block: state.blockNumber.toString() },
            'ledger: after a rebuild from chain events, what the database did not know of the solver key is booked from the chain',
          );
        }
      }
      records.push({
        chainId,
        currency: address,
        blockNumber: state.blockNumber,
        onChain,
        ledger,
        incoming,
        drift: onChain - ledger - incoming,
        checkedAt,
      });
    }
    return { chainId, outcome: 'settled', records, opened };
  }

  async function reconcileChain(chainId: number, rebase?: string): Promise<ChainReconciliation> {
    let result: ChainReconciliation | undefined;
    for (let attempt = 0; attempt < attempts && !job.stopped; attempt += 1) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, retryDelayMs));
      result = await checkOnce(chainId, rebase);
      if (result.outcome === 'settled') break;
    }
    result ??= { chainId, outcome: 'in-flight', reason: 'stopped' };
    if (result.outcome === 'in-flight') {
      await markReconciliationInFlight(db, chainId, ctx.now());
      log.info({ chainId, reason: result.reason }, 'ledger reconciliation: transactions in flight, compared next time');
      return result;
    }
    await saveReconciliations(db, result.records);
    const symbols = new Map(
      chainCurrencies(ctx.config.chains.find((chain) => chain.id === chainId)!).map((currency) => [
        currency.address.toLowerCase(),
        currency.symbol,
      ]),
    );
    for (const record of result.records)
      if (record.drift !== 0n)
        log.warn(
          {
            chainId,
            currency: symbols.get(record.currency) ?? record.currency,
            drift: record.drift.toString(),
            onChain: record.onChain.toString(),
            ledger: record.ledger.toString(),
            block: record.blockNumber.toString(),
          },
          "ledger reconciliation: the solver's balance on chain differs from the ledger",
        );
    return result;
  }

  async function pass(): Promise<ChainReconciliation[]> {
    const results: ChainReconciliation[] = [];
    for (const chain of ctx.config.chains) {
      if (job.stopped) break;
      if (skips.skip(chain.id)) continue;
      try {
        results.push(await reconcileChain(chain.id));
      } catch (error) {
        log.error({ err: error, chainId: chain.id }, 'ledger reconciliation failed; retried at the next interval');
      }
    }
    return results;
  }

  return {
    // The first pass (the opening balances) before the solver follows the chains.
    start: () => job.start(),
    reconcileNow: () => job.runNow(),
    rebase: (chainId, tag) => reconcileChain(chainId, tag),
    stop: () => job.stop(),
  };
}
