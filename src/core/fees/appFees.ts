import { GatewayError } from '../errors.js';

export interface AppFeeEntry {
  recipient: string;
  /** Basis points of the input amount, an integer in 0..10000. */
  feeBps: number;
}

export interface AppFeesReturnType {
  perRecipient: Array<{ recipient: string; feeBps: number; amount: bigint }>;
  totalBps: number;
  /** Sum of the per-recipient amounts (each rounded down first). */
  total: bigint;
}

/**
 * Integrator app fees (quote `appFees`, spec "Fee rules" §5): each entry takes `amount * feeBps / 10000` of the
 * input, rounded DOWN per entry (the integrator is never over-paid at the user's expense), in entry order.
 * Throws `INVALID_INPUT` when an entry's bps is not an integer in 0..10000, the bps total exceeds 10000, or the
 * amount is negative. Recipient address validation is the caller's job.
 */
export function appFees(amount: bigint, entries: ReadonlyArray<AppFeeEntry>): AppFeesReturnType {
  if (amount < 0n) throw new GatewayError('INVALID_INPUT', `Amount must not be negative, got ${amount}`);
  let totalBps = 0;
  for (const [index, { feeBps }] of entries.entries()) {
    if (!Number.isInteger(feeBps) || feeBps < 0 || feeBps > 10_000) {
      throw new GatewayError(
        'INVALID_INPUT',
        `appFees[${index}].fee must be an integer number of bps in 0..10000, got ${feeBps}`,
      );
    }
    totalBps += feeBps;
  }
  if (totalBps > 10_000) {
    throw new GatewayError('INVALID_INPUT', `Total app fees must not exceed 10000 bps, got ${totalBps}`);
  }
  const perRecipient = entries.map(({ recipient, feeBps }) => ({
    recipient,
    feeBps,
    amount: (amount * BigInt(feeBps)) / 10_000n,
  }));
  return { perRecipient, totalBps, total: perRecipient.reduce((sum, entry) => sum + entry.amount, 0n) };
}
