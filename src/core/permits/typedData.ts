import { encodeFunctionData, parseAbi, parseSignature, type Address, type Hex } from 'viem';
import type { PermitStandard } from '../ports/permits.js';

/**
 * The permit a quote with `usePermit: true` asks the user to sign, stored with the request (`quote.permit`) so
 * the signature posted later is checked against exactly this message. Amounts and times are decimal strings
 * (JSON), the 3009 nonce a bytes32 hex string, the 2612 nonce a decimal string.
 */
export interface StoredPermit {
  kind: PermitStandard;
  chainId: number;
  token: Address;
  /** The order's user: the signer, and the depositor of record. */
  owner: Address;
  /** The origin chain's approval proxy: the payee (3009) or spender (2612). */
  spender: Address;
  value: string;
  /** 3009 `validBefore` / 2612 `deadline`, Unix seconds. */
  expiry: string;
  nonce: string;
  domain: { name: string; version: string };
}

const eip3009Types = {
  ReceiveWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

const eip2612Types = {
  Permit: [
    { name: 'owner', type: 'address' },
    { name: 'spender', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
  ],
} as const;

/** The EIP-712 typed data of a stored permit, with bigint values (what viem signs and recovers). */
export function permitTypedData(permit: StoredPermit) {
  const domain = {
    name: permit.domain.name,
    version: permit.domain.version,
    chainId: permit.chainId,
    verifyingContract: permit.token,
  };
  if (permit.kind === 'eip3009') {
    return {
      domain,
      types: eip3009Types,
      primaryType: 'ReceiveWithAuthorization' as const,
      message: {
        from: permit.owner,
        to: permit.spender,
        value: BigInt(permit.value),
        validAfter: 0n,
        validBefore: BigInt(permit.expiry),
        nonce: permit.nonce as Hex,
      },
    };
  }
  return {
    domain,
    types: eip2612Types,
    primaryType: 'Permit' as const,
    message: {
      owner: permit.owner,
      spender: permit.spender,
      value: BigInt(permit.value),
      nonce: BigInt(permit.nonce),
      deadline: BigInt(permit.expiry),
    },
  };
}

export const approvalProxyPermitAbi = parseAbi([
  'function depositWithAuthorization(bytes32 id, address token, address from, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s) returns (uint256)',
  'function depositWithPermit(bytes32 id, address token, address from, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s) returns (uint256)',
]);

/** The approval proxy call that redeems the signed permit and deposits it for `requestId`. */
export function permitDepositCalldata(permit: StoredPermit, requestId: Hex, signature: Hex): Hex {
  const { r, s, v, yParity } = parseSignature(signature);
  const vByte = Number(v ?? BigInt(yParity + 27));
  if (permit.kind === 'eip3009') {
    return encodeFunctionData({
      abi: approvalProxyPermitAbi,
      functionName: 'depositWithAuthorization',
      args: [
        requestId,
        permit.token,
        permit.owner,
        BigInt(permit.value),
        0n,
        BigInt(permit.expiry),
        permit.nonce as Hex,
        vByte,
        r,
        s,
      ],
    });
  }
  return encodeFunctionData({
    abi: approvalProxyPermitAbi,
    functionName: 'depositWithPermit',
    args: [requestId, permit.token, permit.owner, BigInt(permit.value), BigInt(permit.expiry), vByte, r, s],
  });
}

/**
 * Gas the gateway's permit deposit costs at most (proxy call, token redemption, the depository's first deposit):
 * measured on the devnet and checked against real receipts by `test/permits/permitDeposit.test.ts`. It prices
 * the origin leg of the execution fee (the gateway pays it).
 */
export const PERMIT_DEPOSIT_GAS: Readonly<Record<PermitStandard, bigint>> = { eip3009: 180_000n, eip2612: 190_000n };

/**
 * The permit deposit the gateway sends through `approvalProxy`, at its largest: every field of the call at its
 * widest value (no zero byte but the ABI's padding), so the L1 data fee an OP-stack origin charges for these bytes
 * is at least the real deposit's, priced at quote time before the user signs.
 */
export function representativePermitDeposit(
  standard: PermitStandard,
  approvalProxy: Address,
  token: Address,
): { to: Address; data: Hex; value: bigint } {
  const widest: Hex = `0x${'ff'.repeat(32)}`;
  const data = permitDepositCalldata(
    {
      kind: standard,
      chainId: 0,
      token,
      owner: `0x${'ff'.repeat(20)}`,
      spender: approvalProxy,
      value: BigInt(widest).toString(),
      expiry: BigInt(widest).toString(),
      nonce: widest,
      domain: { name: '', version: '' },
    },
    widest,
    // r and s below the curve's order (a signature must parse), still without a zero byte.
    `0x${'7f'.repeat(64)}1c`,
  );
  return { to: approvalProxy, data, value: 0n };
}
