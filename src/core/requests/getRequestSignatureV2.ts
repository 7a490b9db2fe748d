import { encodeAbiParameters, keccak256, pad, parseAbiParameters, type Address, type Hex } from 'viem';
import type { CoreContext } from '../context.js';
import { requireRequest } from './getIntentStatus.js';
import { paidRecipientOf } from './paidRecipient.js';

export interface GetRequestSignatureV2Parameters {
  /** bytes32 hex request id, any letter case. */
  requestId: string;
}

/** What the v2 attestation signs: both ends of the trade, without the amount. */
export interface SignedRequestDataV2 {
  originChainId: number;
  /** The depositor (the quote's `user`). */
  originUser: Address;
  /** The deposited currency; the zero address is the native currency. */
  originCurrency: Address;
  destinationChainId: number;
  /**
   * Whom the fill pays on the destination chain: the recipient, or for a request with calls the multicaller
   * that runs them (`paidRecipientOf`).
   */
  destinationUser: Address;
  /** The currency delivered; the zero address is the native currency. */
  destinationCurrency: Address;
}

export interface GetRequestSignatureV2ReturnType {
  requestId: Hex;
  requestData: SignedRequestDataV2;
  /** The solver's EIP-191 personal-message signature over `attestationHashV2(requestId, requestData)`. */
  signature: Hex;
}

const parametersV2 = parseAbiParameters(
  'bytes32 requestId, uint256 originChainId, bytes32 originUser, bytes32 originCurrency, uint256 destinationChainId, bytes32 destinationUser, bytes32 destinationCurrency',
);

/**
 * The 32-byte hash of the v2 attestation: keccak256(abi.encode(bytes32 requestId, uint256 originChainId,
 * bytes32 originUser, bytes32 originCurrency, uint256 destinationChainId, bytes32 destinationUser, bytes32
 * destinationCurrency)), addresses left-padded to bytes32. The reference does not publish its v2 encoding;
 * this one follows the v1 attestation's layout with the v2 fields (docs/api-notes.md).
 */
export function attestationHashV2(requestId: Hex, data: SignedRequestDataV2): Hex {
  return keccak256(
    encodeAbiParameters(parametersV2, [
      requestId,
      BigInt(data.originChainId),
      pad(data.originUser, { size: 32 }),
      pad(data.originCurrency, { size: 32 }),
      BigInt(data.destinationChainId),
      pad(data.destinationUser, { size: 32 }),
      pad(data.destinationCurrency, { size: 32 }),
    ]),
  );
}

/**
 * The solver's signed attestation of a request's two ends (`GET /requests/{requestId}/signature/v2`):
 * deterministic (RFC 6979), so asking twice gives the same bytes.
 *
 * @throws `INVALID_INPUT` (400) when `requestId` is not 32 bytes of hex; `NOT_FOUND` (404) for an unknown request.
 */
export async function getRequestSignatureV2(
  ctx: CoreContext,
  params: GetRequestSignatureV2Parameters,
): Promise<GetRequestSignatureV2ReturnType> {
  const request = await requireRequest(ctx, params.requestId);
  const requestId = request.id as Hex;
  const requestData: SignedRequestDataV2 = {
    originChainId: request.originChainId,
    originUser: request.user as Address,
    originCurrency: request.originCurrency as Address,
    destinationChainId: request.destinationChainId,
    destinationUser: paidRecipientOf(request),
    destinationCurrency: request.destinationCurrency as Address,
  };
  const signature = await ctx.solver.signMessage({ message: { raw: attestationHashV2(requestId, requestData) } });
  return { requestId, requestData, signature };
}
