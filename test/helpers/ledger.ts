import { expect } from 'vitest';
import type { TestGateway } from './gateway.js';

/**
 * Runs the gateway's ledger reconciliation (`src/core/ledger/reconciler.ts`) until every chain is compared (a pass
 * with transactions in flight compares nothing), and expects no drift: the ledger's solver holdings equal the
 * solver's balances on chain, per chain and currency.
 */
export async function expectLedgerReconciled(gateway: TestGateway, timeoutMs = 30_000): Promise<void> {
  const runtime = gateway.server.solver;
  if (runtime === null) throw new Error('the gateway does not run the solver');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const results = await runtime.reconciler.reconcileNow();
    const pending = results.filter((result) => result.outcome !== 'settled');
    if (pending.length === 0) {
      const drift = results.flatMap((result) =>
        result.outcome === 'settled'
          ? result.records
              .filter((record) => record.drift !== 0n)
              .map((record) => ({ chainId: record.chainId, currency: record.currency, drift: record.drift }))
          : [],
      );
      expect(drift).toEqual([]);
      return;
    }
    if (Date.now() > deadline) throw new Error(`the ledger was never compared: ${JSON.stringify(pending)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
