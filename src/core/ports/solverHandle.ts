import type { PermitDepositor } from './permits.js';
import type { DepositWatcher, FastFillLifecycle, GaslessLifecycle } from './solver.js';
import type { SelfRefundDecision } from './selfRefundDecision.js';

/**
 * What the solver running in this instance lends to the core's operations: the intake (deposit watchers, for
 * `POST /transactions/index`), the deposit-address watchers (reindex), fast fill, gasless batches, the claim payer
 * and the permit depositor. Only the instance that leads runs the solver (see `server/solverLeadership.ts`), so
 * these come and go with leadership.
 */
export interface SolverParts {
  watchers: ReadonlyMap<number, DepositWatcher>;
  /** Rescans a chain for one deposit address's transfers (`POST /transactions/deposit-address/reindex`). */
  depositAddressWatchers: ReadonlyMap<
    number,
    { rescan(address: string, blocks: bigint): Promise<number>; rescanning(): boolean }
  >;
  fastFiller: FastFillLifecycle;
  gasless: GaslessLifecycle;
  /** Woken when a claim is authorized; without it the payer finds the claim at its next pass. */
  claimPayer: { wake(): void };
  permitDepositor: PermitDepositor;
  /** Refunds a held request at its depositor's signed request (`POST /requests/refund`, `Solver.refundOnRequest`). */
  selfRefunds: { refundOnRequest(requestId: string): Promise<SelfRefundDecision | undefined> };
}

/** The core's read-only view of the solver: `running` is undefined while this instance runs none. */
export interface SolverHandle {
  readonly running: SolverParts | undefined;
}

/** The composition root's side of the handle: it attaches the parts when it starts solving, and detaches them. */
export interface SolverSwitch extends SolverHandle {
  attach(parts: SolverParts): void;
  detach(): void;
}

/**
 * A handle built once with the core context and never replaced, so the context itself is never mutated after it
 * is built: leadership changes only what the handle points to.
 */
export function createSolverSwitch(): SolverSwitch {
  let running: SolverParts | undefined;
  return {
    get running() {
      return running;
    },
    attach(parts) {
      running = parts;
    },
    detach() {
      running = undefined;
    },
  };
}
