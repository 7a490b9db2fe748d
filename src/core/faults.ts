/**
 * Crash points for fault tests (`GATEWAY_CRASH_AT`). A real process can die anywhere, but not on demand: these
 * named points let a test kill the gateway with SIGKILL at one exact step of the solver's lifecycle and check
 * that a restart reconciles with the chains. Production never sets a crash point, and then `crashPoint` does
 * nothing.
 */

/** Every point where a test can kill the process, in lifecycle order. */
export const crashPoints = [
  /** A permit's signature is accepted and recorded (request `depositing`); its deposit is not sent yet. */
  'permit-accepted',
  /** The deposit is claimed and the request moved `waiting -> pending`; nothing decided yet. */
  'deposit-claimed',
  /** A gasless batch is accepted (its request `depositing`, the batch recorded); nothing is signed or sent yet. */
  'gasless-accepted',
  /** The gasless batch's transaction is signed and recorded in `outgoing_txs`; not broadcast yet. */
  'gasless-recorded',
  /** The fill is signed and recorded (`prepared`) but not broadcast. */
  'fill-recorded',
  /** A node accepted the fill; the row does not say `broadcast` yet. */
  'fill-broadcast',
  /** The request is `submitted` with the fill's hash; its receipt not awaited yet. */
  'fill-submitted',
  /** The fill is mined and its row `confirmed` or `failed`; the request's status not changed yet. */
  'fill-mined',
  /** The fill reverted and the request is `failure`; no refund recorded yet. */
  'fill-reverted',
  /** A depositor's refund request is accepted and recorded on the request (still `pending`); no refund sent yet. */
  'refund-requested',
  /** The refund is signed and recorded (`prepared`) but not broadcast. */
  'refund-recorded',
  /** A node accepted the refund; the row does not say `broadcast` yet. */
  'refund-broadcast',
  /** The refund is mined and its row updated; the request's status not changed yet. */
  'refund-mined',
  /** A settlement batch's deposits are recorded (`settlement_items`); its transaction is not built yet. */
  'settle-batched',
  /** The settlement transaction is signed and recorded (`prepared`) but not broadcast. */
  'settle-recorded',
  /** A node accepted the settlement; the row does not say `broadcast` yet. */
  'settle-broadcast',
  /** The settlement is mined and its row (and ledger) updated; the batch not marked settled yet. */
  'settle-mined',
  /** An app-fee claim is authorized (`pending`); its payout is not recorded yet. */
  'claim-authorized',
  /** The claim's payout is signed and recorded (`prepared`) but not broadcast. */
  'claim-recorded',
  /** A node accepted the claim's payout; the row does not say `broadcast` yet. */
  'claim-broadcast',
  /** The payout is mined and its row, the claim and the ledger updated. */
  'claim-mined',
  /** A deposit-address transfer is decided (request, legs) and recorded `sweeping`; no sweep sent yet. */
  'transfer-decided',
  /** The sweep is signed and recorded (`prepared`) but not broadcast. */
  'sweep-recorded',
  /** A node accepted the sweep; the row does not say `broadcast` yet. */
  'sweep-broadcast',
  /** The sweep is mined (its deposits are in the depository); the transfer not marked swept, nothing filled. */
  'sweep-mined',
] as const;

export type CrashPoint = (typeof crashPoints)[number];

export const isCrashPoint = (value: string): value is CrashPoint => (crashPoints as readonly string[]).includes(value);

/**
 * Kills the process at once with SIGKILL (no handler, no cleanup, like `kill -9`) when `point` is the configured
 * `crashAt`; does nothing otherwise.
 */
export function crashPoint(crashAt: CrashPoint | undefined, point: CrashPoint): void {
  if (crashAt === point) process.kill(process.pid, 'SIGKILL');
}
