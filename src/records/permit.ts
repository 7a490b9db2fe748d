/** An accepted permit deposit, as the store keeps it and the core reads it. */

export type PermitStatus = 'accepted' | 'submitted' | 'failed';

/** The approval proxy call that redeems an accepted permit. */
export interface PermitCall {
  to: string;
  data: string;
  /** Gas limit, decimal string. */
  gas: string;
}

export interface PermitRecord {
  requestId: string;
  chainId: number;
  kind: string;
  /** As posted, lower-case hex. */
  signature: string;
  call: PermitCall;
  status: PermitStatus;
  createdAt: number;
  updatedAt: number;
}
