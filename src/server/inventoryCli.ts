/**
 * `npm run inventory -- [gateway URL]`: prints the solver's inventory and the rebalancing plan of a running
 * gateway (`GET /admin/inventory`, with `GATEWAY_ADMIN_TOKEN`). The URL defaults to `http://127.0.0.1:$PORT`
 * (4000).
 */
import type { Address } from 'viem';
import { formatInventory, type InventoryReport } from '../core/inventory/inventory.js';

interface WireReport {
  inventory: Array<Record<string, unknown>>;
  short: Array<Record<string, unknown>>;
  reconciliation: Array<Record<string, unknown>>;
  plan: Array<{
    group: string;
    from: { chainId: number; currency: Address };
    to: { chainId: number; currency: Address };
    amount: string;
  }>;
}

const big = (value: unknown): bigint => BigInt(String(value));

async function main(): Promise<number> {
  const url = process.argv[2] ?? `http://127.0.0.1:${process.env.PORT ?? '4000'}`;
  const token = process.env.GATEWAY_ADMIN_TOKEN;
  if (token === undefined || token === '') {
    process.stderr.write('GATEWAY_ADMIN_TOKEN must be set (the admin token of the gateway)\n');
    return 2;
  }
  const response = await fetch(`${url.replace(/\/$/, '')}/admin/inventory`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const body = (await response.json()) as WireReport & { message?: string };
  if (!response.ok) {
    process.stderr.write(`${response.status}: ${body.message ?? JSON.stringify(body)}\n`);
    return 1;
  }
  const report: InventoryReport = {
    lines: body.inventory.map((line) => ({
      chainId: Number(line.chainId),
      currency: line.currency as Address,
      group: String(line.group),
      symbol: String(line.symbol),
      decimals: Number(line.decimals),
      onChain: big(line.onChain),
      committed: big(line.committed),
      available: big(line.available),
      pendingSettlement: big(line.pendingSettlement),
      ledger: big(line.ledger),
    })),
    short: body.short.map((entry) => ({
      group: String(entry.group),
      chainId: Number(entry.chainId),
      currency: entry.currency as Address,
      target: big(entry.target),
      shortBy: big(entry.shortBy),
    })),
    plan: body.plan.map((move) => ({ ...move, amount: big(move.amount) })),
    reconciliation: body.reconciliation.map((check) => ({
      chainId: Number(check.chainId),
      currency: String(check.currency),
      blockNumber: big(check.blockNumber),
      onChain: big(check.onChain),
      ledger: big(check.ledger),
      incoming: big(check.incoming),
      drift: big(check.drift),
      checkedAt: Number(check.checkedAt),
      inFlightAt: check.inFlightAt === null ? null : Number(check.inFlightAt),
    })),
  };
  process.stdout.write(`${formatInventory(report).join('\n')}\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
