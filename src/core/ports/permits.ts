import type { Address, Hex } from 'viem';

/** The permit standards a deposit by signature can use, in the order the gateway prefers them. */
export type PermitStandard = 'eip3009' | 'eip2612';

/** What a token supports on chain, read from the token itself. */
export interface PermitToken {
  /** Supported standards, preferred first (EIP-3009 before EIP-2612); empty when neither. */
  standards: PermitStandard[];
  /** The token's EIP-712 domain name and version (the chain id and address complete it). */
  domain: { name: string; version: string };
}

/** What the permit flow reads from the chains (implemented in `src/chain/permits.ts`). */
export interface PermitChain {
  /**
   * The permit support of `token` on chain `chainId`, probed on chain (EIP-5267 `eip712Domain`, or `name` and
   * `version`; EIP-3009 `authorizationState`; EIP-2612 `nonces` and `DOMAIN_SEPARATOR`). Cached once known.
   * Throws a transient `GatewayError` (RPC) when the chain cannot be read.
   */
  token(chainId: number, token: Address): Promise<PermitToken>;
  /** The EIP-2612 nonce `owner` signs next. */
  permitNonce(chainId: number, token: Address, owner: Address): Promise<bigint>;
  /** Whether `owner`'s EIP-3009 authorization `nonce` is used or cancelled. */
  authorizationUsed(chainId: number, token: Address, owner: Address, nonce: Hex): Promise<boolean>;
  /** The ERC-20 balance of `owner`. */
  balance(chainId: number, token: Address, owner: Address): Promise<bigint>;
  /** The ERC-20 allowance `owner` gives `spender`. */
  allowance(chainId: number, token: Address, owner: Address, spender: Address): Promise<bigint>;
}

/** Submits accepted permit deposits (`src/core/permits/depositor.ts`); present while the solver runs. */
export interface PermitDepositor {
  /** Submits the accepted permit of `requestId` through the approval proxy, once; work is queued per request. */
  submit(requestId: Hex): void;
}
