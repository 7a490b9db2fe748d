import { encodeAbiParameters, keccak256, pad, parseAbiParameters, type Address, type Hex } from 'viem';
import { getRequest } from '../../store/requests.repository.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { paidRecipientOf } from './paidRecipient.js';

export interface GetRequestSignatureParameters {
  /** bytes32 hex request id, any letter case. */
  requestId: string;
}

/** The order parameters the solver attests (core shape: the amount is a bigint, addresses lower case). */
export interface SignedRequestData {
  originChainId: number;
  /** The depositor (the quote's `user`). */
  originUser: Address;
  /** The deposited currency; the zero address is the native currency. */
  originCurrency: Address;
  /** Deposited amount, smallest units. */
  originAmount: bigint;
  /**
   * Where the deposit is paid on the origin chain: the request's deposit address, else the origin chain's
   * depository. Informational (the reference returns it); it is not part of the signed hash. Absent when the
   * origin chain is no longer configured.
   */
  originTransferDestination?: Address;
  destinationChainId: number;
  /**
   * Whom the fill pays on the destination chain: the recipient, or for a request with calls the multicaller
   * that runs them (`paidRecipientOf`).
   */
  destinationUser: Address;
}

export interface GetRequestSignatureReturnType {
  requestId: Hex;
  requestData: SignedRequestData;
  /** The solver's EIP-191 personal-message signature (65 bytes) over `attestationHash(requestId, requestData)`. */
  signature: Hex;
}

/** The fields that are hashed, in order, with their ABI types (what `AttestationVerifier.attestationHash` encodes). */
const attestationParameters = parseAbiParameters(
  'bytes32 requestId, uint256 originChainId, bytes32 originUser, bytes32 originCurrency, uint256 originAmount, uint256 destinationChainId, bytes32 destinationUser',
);

const bytes32Pattern = /^0x[0-9a-fA-F]{64}$/;

/** An address (or any hex of at most 32 bytes) left-padded to bytes32, as `bytes32(uint256(uint160(a)))`. */
const toBytes32 = (value: Hex): Hex => pad(value, { size: 32 });

/**
 * The 32-byte hash the solver signs as a personal message: keccak256(abi.encode(bytes32 requestId, uint256
 * originChainId, bytes32 originUser, bytes32 originCurrency, uint256 originAmount, uint256 destinationChainId,
 * bytes32 destinationUser)), addresses left-padded to bytes32. Pure; equal to the contract's
 * `AttestationVerifier.attestationHash` for the same fields.
 */
export function attestationHash(
  requestId: Hex,
  data: Pick<
    SignedRequestData,
    'originChainId' | 'originUser' | 'originCurrency' | 'originAmount' | 'destinationChainId' | 'destinationUser'
  >,
): Hex {
  return keccak256(
    encodeAbiParameters(attestationParameters, [
      requestId,
      BigInt(data.originChainId),
      toBytes32(data.originUser),
      toBytes32(data.originCurrency),
      data.originAmount,
      BigInt(data.destinationChainId),
      toBytes32(data.destinationUser),
    ]),
  );
}

/**
 * The solver's signed attestation of a request's order parameters, for optional on-chain validation of a
 * payment (`AttestationVerifier.verify`). Backs `GET /requests/{requestId}/signature` and the GraphQL
 * `requestSignature` field. The signature is deterministic (RFC 6979), so asking twice gives the same bytes.
 *
 * @throws `INVALID_INPUT` (400) when `requestId` is not 32 bytes of hex; `NOT_FOUND` (404) for an unknown request.
 */
export async function getRequestSignature(
  ctx: CoreContext,
  params: GetRequestSignatureParameters,
): Promise<GetRequestSignatureReturnType> {
  if (!bytes32Pattern.test(params.requestId)) {
    throw new GatewayError('INVALID_INPUT', `'${params.requestId}' is not a request id (0x + 64 hex digits)`);
  }
  const request = await getRequest(ctx.db, params.requestId);
  if (request === undefined) throw new GatewayError('NOT_FOUND', `Request ${params.requestId} not found`);

  const requestId = request.id as Hex;
  const origin = ctx.config.chains.find((chain) => chain.id === request.originChainId);
  const originTransferDestination = (request.depositAddress ?? origin?.contracts.depository.toLowerCase()) as
    Address | undefined;
  const requestData: SignedRequestData = {
    originChainId: request.originChainId,
    originUser: request.user as Address,
    originCurrency: request.originCurrency as Address,
    originAmount: request.amountIn,
    ...(originTransferDestination === undefined ? {} : { originTransferDestination }),
    destinationChainId: request.destinationChainId,
    destinationUser: paidRecipientOf(request),
  };
  const signature = await ctx.solver.signMessage({ message: { raw: attestationHash(requestId, requestData) } });
  return { requestId, requestData, signature };
}
