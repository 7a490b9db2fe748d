/** An app-fee claim as the store keeps it and the core reads it. */

/**
 * App-fee claims (`app_fee_claims`): created `authorizing`, `pending` once the wallet's signature is accepted,
 * `success` / `failed` when the payout is mined. See `src/core/appFees/claim.ts`.
 */
export type ClaimStatus = 'authorizing' | 'pending' | 'success' | 'failed';

export interface ClaimRecord {
  id: string;
  seq: number;
  wallet: string;
  recipient: string;
  chainId: number;
  currency: string;
  usdMicros: bigint;
  feeUsdMicros: bigint;
  amount: bigint;
  message: string;
  status: ClaimStatus;
  txHash: string | null;
  expiresAt: number;
  createdAt: number;
  updatedAt: number;
}
