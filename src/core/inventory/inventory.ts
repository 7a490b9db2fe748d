import { formatUnits, type Address } from 'viem';
import { ledgerBalances } from '../../store/ledger.repository.js';
import { accounts } from '../ledger/movements.js';
import { listReconciliations } from '../../store/reconciliations.repository.js';
import { sumCommittedFills } from '../../store/committedOutflow.repository.js';
import { sumPendingSettlement } from '../../store/settlements.repository.js';
import { createTtlCache, type TtlCache } from '../cache.js';
import { chainCurrencies } from '../chains/requireChain.js';
import type { CoreContext } from '../context.js';
import type { InventorySettings } from '../chains/settings.js';
import { pow10 } from '../powersOfTen.js';
import { type ReconciliationRecord } from '../../records/reconciliation.js';

export interface InventoryLine {
  chainId: number;
  currency: Address;
  /** Currency group id (`usdc`, `eth`): the same asset on several chains. */
  group: string;
  symbol: string;
  decimals: number;
  /** The solver's balance on chain now. */
  onChain: bigint;
  /** Taken by fills in flight (not mined yet). */
  committed: bigint;
  /** On chain less committed: what a new quote may promise. */
  available: bigint;
  /** Deposits filled and due to the solver, still in the depository. */
  pendingSettlement: bigint;
  /**
   * The ledger's `solver` account for this chain and currency: its opening balance and every movement since
   * (equal to `onChain` when nothing is in flight and nothing drifted).
   */
  ledger: bigint;
}

export interface RebalanceMove {
  group: string;
  from: { chainId: number; currency: Address };
  to: { chainId: number; currency: Address };
  /** Smallest units of the source currency. */
  amount: bigint;
}

export interface InventoryReport {
  lines: InventoryLine[];
  /** Chains below their threshold, per currency group, by how much (smallest units) to reach the target. */
  short: Array<{ group: string; chainId: number; currency: Address; target: bigint; shortBy: bigint }>;
  plan: RebalanceMove[];
  /** The ledger's latest reconciliation with the chains (`src/core/reconciliation/reconciler.ts`), per chain and currency. */
  reconciliation: ReconciliationRecord[];
}

const committedCaches = new WeakMap<object, TtlCache<'all', Map<string, bigint>>>();
const lineKey = (chainId: number, currency: string) => `${chainId}:${currency.toLowerCase()}`;

/**
 * What fills in flight will take, per chain and currency, read from the database at most about once a second
 * (quotes ask for it on every call). Renewed in the background from half a second on, so under traffic no quote
 * waits for the read; no answer is older than a second.
 */
export async function committedFills(ctx: CoreContext): Promise<Map<string, bigint>> {
  let cache = committedCaches.get(ctx.db);
  if (cache === undefined) committedCaches.set(ctx.db, (cache = createTtlCache(1_000, { refreshAfterMs: 500 })));
  return cache.get('all', async () => {
    const sums = await sumCommittedFills(ctx.db);
    return new Map(sums.map((row) => [lineKey(row.chainId, row.currency), row.amount]));
  });
}

/** The solver's available balance of a currency on a chain: on chain, less what fills in flight will take. */
export async function availableInventory(ctx: CoreContext, chainId: number, currency: Address): Promise<bigint> {
  const [onChain, committed] = await Promise.all([ctx.market.solverBalance(chainId, currency), committedFills(ctx)]);
  return onChain - (committed.get(lineKey(chainId, currency)) ?? 0n);
}

/** Scales an amount of `decimals` to 18 decimals, so amounts of one asset on chains with other decimals compare. */
const to18 = (amount: bigint, decimals: number) =>
  decimals <= 18 ? amount * pow10(18 - decimals) : amount / pow10(decimals - 18);
const from18 = (amount: bigint, decimals: number) =>
  decimals <= 18 ? amount / pow10(18 - decimals) : amount * pow10(decimals - 18);

/**
 * The rebalancing plan of one currency group: each chain's target is its share of the group's inventory
 * (available plus pending settlement); a chain below `thresholdBps` of its target is short by what reaches the
 * target, and is filled from the chains above their targets, largest surplus first.
 */
export function planRebalance(
  lines: readonly InventoryLine[],
  settings: InventorySettings,
): Pick<InventoryReport, 'short' | 'plan'> {
  const short: InventoryReport['short'] = [];
  const plan: RebalanceMove[] = [];
  const groups = new Map<string, InventoryLine[]>();
  for (const line of lines) groups.set(line.group, [...(groups.get(line.group) ?? []), line]);
  for (const [group, members] of groups) {
    if (members.length < 2) continue;
    const held = members.map((line) => to18(line.available + line.pendingSettlement, line.decimals));
    const total = held.reduce((sum, value) => sum + (value > 0n ? value : 0n), 0n);
    const explicit = members.every((line) => settings.targetBps.has(line.chainId));
    const targets = members.map((line) =>
      explicit ? (total * BigInt(settings.targetBps.get(line.chainId)!)) / 10_000n : total / BigInt(members.length),
    );
    const surplus = members.map((_, i) => held[i]! - targets[i]!);
    members.forEach((line, i) => {
      if (held[i]! * 10_000n < targets[i]! * BigInt(settings.thresholdBps)) {
        short.push({
          group,
          chainId: line.chainId,
          currency: line.currency,
          target: from18(targets[i]!, line.decimals),
          shortBy: from18(targets[i]! - held[i]!, line.decimals),
        });
      }
    });
    for (const need of short.filter((entry) => entry.group === group)) {
      const to = members.findIndex((line) => line.chainId === need.chainId);
      let missing = targets[to]! - held[to]!;
      while (missing > 0n) {
        let from = -1;
        members.forEach((_, i) => {
          if (surplus[i]! > 0n && (from === -1 || surplus[i]! > surplus[from]!)) from = i;
        });
        if (from === -1) break;
        const moved = surplus[from]! < missing ? surplus[from]! : missing;
        surplus[from]! -= moved;
        missing -= moved;
        const source = members[from]!;
        const amount = from18(moved, source.decimals);
        if (amount > 0n)
          plan.push({
            group,
            from: { chainId: source.chainId, currency: source.currency },
            to: { chainId: need.chainId, currency: need.currency },
            amount,
          });
      }
    }
  }
  return { short, plan };
}

/** Every chain and currency's inventory, and the rebalancing plan (`GET /admin/inventory`, `npm run inventory`). */
export async function getInventory(ctx: CoreContext, settings: InventorySettings): Promise<InventoryReport> {
  const [committed, pending, ledger, reconciliation] = await Promise.all([
    sumCommittedFills(ctx.db),
    sumPendingSettlement(ctx.db),
    ledgerBalances(ctx.db, { accountPrefix: accounts.solver }),
    listReconciliations(ctx.db),
  ]);
  const sumOf = (rows: Array<{ chainId: number; currency: string; amount: bigint }>, chainId: number, c: string) =>
    rows
      .filter((row) => row.chainId === chainId && row.currency.toLowerCase() === c.toLowerCase())
      .reduce((sum, row) => sum + row.amount, 0n);
  const solverLedger = ledger.filter((row) => row.account === accounts.solver);
  const lines = await Promise.all(
    ctx.config.chains.flatMap((chain) =>
      chainCurrencies(chain).map(async (currency): Promise<InventoryLine> => {
        const onChain = await ctx.market.balanceOf(chain.id, ctx.config.solverAddress, currency.address);
        const taken = sumOf(committed, chain.id, currency.address);
        return {
          chainId: chain.id,
          currency: currency.address,
          group: currency.id,
          symbol: currency.symbol,
          decimals: currency.decimals,
          onChain,
          committed: taken,
          available: onChain - taken,
          pendingSettlement: sumOf(pending, chain.id, currency.address),
          ledger: sumOf(solverLedger, chain.id, currency.address),
        };
      }),
    ),
  );
  return { lines, ...planRebalance(lines, settings), reconciliation };
}

/** The report as text lines, for the CLI and logs. */
export function formatInventory(report: InventoryReport): string[] {
  const header = ['chain', 'currency', 'on chain', 'committed', 'available', 'pending settle'];
  const rows = report.lines.map((line) => {
    const f = (amount: bigint) => formatUnits(amount, line.decimals);
    return [
      String(line.chainId),
      line.symbol,
      f(line.onChain),
      f(line.committed),
      f(line.available),
      f(line.pendingSettlement),
    ];
  });
  // Each column as wide as its widest cell (18-decimal amounts run long): labels to the left, amounts to the right.
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const align = (cells: string[]) =>
    cells
      .map((cell, column) => (column >= 2 ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  const out = [align(header), ...rows.map(align)];
  const decimalsOf = (chainId: number, currency: string) =>
    report.lines.find((l) => l.chainId === chainId && l.currency === currency)?.decimals ?? 18;
  for (const entry of report.short)
    out.push(
      `short: ${entry.group} on ${entry.chainId} by ${formatUnits(entry.shortBy, decimalsOf(entry.chainId, entry.currency))}`,
    );
  for (const move of report.plan)
    out.push(
      `move: ${formatUnits(move.amount, decimalsOf(move.from.chainId, move.from.currency))} ${move.group} from ${move.from.chainId} to ${move.to.chainId}`,
    );
  for (const check of report.reconciliation) {
    const line = report.lines.find((l) => l.chainId === check.chainId && l.currency.toLowerCase() === check.currency);
    const decimals = line?.decimals ?? 18;
    const when = new Date(check.checkedAt).toISOString();
    out.push(
      `reconciliation: ${line?.symbol ?? check.currency} on ${check.chainId} at block ${check.blockNumber} (${when}): ` +
        `drift ${formatUnits(check.drift, decimals)}${check.inFlightAt === null ? '' : ' (since then: in flight)'}`,
    );
  }
  return out;
}
