/** Reads the status record a request event or a webhook delivery stored. */
import {
  addressOnlyDepositAddress,
  type RequestStatusSnapshot,
  type StatusDepositAddress,
} from '../records/requestStatus.js';

/**
 * A stored event payload as a snapshot. Events written before the deposit-address object carried the address
 * alone (a string): read as `addressOnlyDepositAddress`.
 */
export function readStatusSnapshot(payload: unknown): RequestStatusSnapshot {
  const snapshot = payload as Omit<RequestStatusSnapshot, 'depositAddress'> & { depositAddress?: unknown };
  const stored = snapshot.depositAddress;
  if (typeof stored === 'string') return { ...snapshot, depositAddress: addressOnlyDepositAddress(stored) };
  return { ...snapshot, depositAddress: (stored ?? null) as StatusDepositAddress | null };
}
