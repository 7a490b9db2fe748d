import { getAddress, hashTypedData, type Address, type Hex } from 'viem';
import type { RequestRecord } from '../../records/request.js';
import { getRequest } from '../../store/requests.repository.js';
import { requireChain } from '../chains/requireChain.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { parseInteger } from '../inputs.js';
import { REFUND_REQUESTED } from '../solver/decide.js';
import { attachedDeposit } from '../solver/refund.js';
import { parseRequestId, requestNotFound } from '../vocabulary/requestId.js';

export interface RequestRefundParameters {
  requestId: string;
  /** Unix seconds after which the signature is no longer accepted. */
  deadline: number;
  /** The depositor's EIP-712 signature of `refundRequestTypedData` (a contract wallet's EIP-1271 one). */
  signature: string;
}

export interface RequestRefundReturnType {
  message: string;
  requestId: string;
  /** The request's status once answered: `refund` when refunded, `pending` while the refund is under way. */
  status: RequestRecord['status'];
  /** The refund's transaction on the origin chain, once mined. */
  refundTxHash: string | null;
}

/** How long the answer waits for the refund to be mined before it answers `pending` (the refund goes on). */
const REFUND_WAIT_MS = 20_000;

const refundRequestTypes = {
  RefundRequest: [
    { name: 'requestId', type: 'bytes32' },
    { name: 'deadline', type: 'uint256' },
  ],
} as const;

/**
 * The EIP-712 message a depositor signs to ask for the refund of a request: domain `Intent Gateway` version `1` on
 * the origin chain, verified by the origin chain's depository (the contract that holds the deposit), and
 * `RefundRequest(bytes32 requestId,uint256 deadline)`.
 */
export function refundRequestTypedData(
  depository: Address,
  params: { originChainId: number; requestId: Hex; deadline: bigint },
) {
  return {
    domain: { name: 'Intent Gateway', version: '1', chainId: params.originChainId, verifyingContract: depository },
    types: refundRequestTypes,
    primaryType: 'RefundRequest' as const,
    message: { requestId: params.requestId, deadline: params.deadline },
  };
}

/**
 * `POST /requests/refund`, `Mutation.requestRefund`: the depositor of a request the solver holds (`fillGate.ts`: a
 * price nobody can check, the outflow limit, a destination out of service) asks for its refund, signed (EIP-712, or
 * EIP-1271 for a contract wallet, checked on the origin chain). The solver refunds it on the origin chain at once,
 * through its usual refund path (`failReason` `MANUAL_ADMIN_REFUND`, status events like any refund). Idempotent: a
 * request refunded so answers the same again.
 *
 * @throws `INVALID_INPUT` (malformed, or past its deadline), `NOT_FOUND`, `FORBIDDEN` (not the depositor's
 * signature), `CONFLICT` (nothing deposited, being filled, filled, refunded or failed otherwise),
 * `SERVICE_UNAVAILABLE` (no solver on this instance).
 */
export async function requestRefund(
  ctx: CoreContext,
  params: RequestRefundParameters,
): Promise<RequestRefundReturnType> {
  const requestId = parseRequestId(params.requestId);
  const deadline = parseInteger(params.deadline, 'deadline', 1, Number.MAX_SAFE_INTEGER);
  if (!/^0x(?:[0-9a-fA-F]{2})+$/.test(params.signature))
    throw new GatewayError('INVALID_INPUT', 'signature must be 0x followed by hex bytes', { data: 'signature' });
  if (deadline * 1_000 <= ctx.now())
    throw new GatewayError('INVALID_INPUT', `The refund request's deadline (${deadline}) has passed; sign a new one`, {
      data: 'deadline',
    });
  const request = await getRequest(ctx.db, requestId);
  if (request === undefined) throw requestNotFound(requestId);
  // Refunded (or found too small to refund) at an earlier request of the same kind: answered the same again.
  const answered =
    request.failReason === REFUND_REQUESTED && (request.status === 'refund' || request.status === 'failure');
  if (!answered) refuseUnlessPending(request);
  const deposit = await attachedDeposit(ctx.db, request);
  if (deposit === null) throw new GatewayError('CONFLICT', `Request ${requestId} has no deposit to refund`);
  const depository = requireChain(ctx, deposit.chainId).contracts.depository;
  const typedData = refundRequestTypedData(depository, {
    originChainId: deposit.chainId,
    requestId,
    deadline: BigInt(deadline),
  });
  const depositor = getAddress(deposit.depositor);
  const signed = await ctx.market.verifyHash(deposit.chainId, {
    signer: depositor,
    hash: hashTypedData(typedData),
    signature: params.signature as Hex,
  });
  if (!signed)
    throw new GatewayError(
      'FORBIDDEN',
      `The signature is not the depositor's (${depositor}) of this refund request: only the depositor may ask for it`,
    );
  if (answered) return outcome(request);

  const selfRefunds = ctx.solving.running?.selfRefunds;
  if (selfRefunds === undefined)
    throw new GatewayError('SERVICE_UNAVAILABLE', 'The solver is not running on this gateway');
  let timer: NodeJS.Timeout | undefined;
  const decision = await Promise.race([
    selfRefunds.refundOnRequest(requestId),
    new Promise<'waiting'>((resolve) => (timer = setTimeout(resolve, REFUND_WAIT_MS, 'waiting'))),
  ]).finally(() => clearTimeout(timer));
  const now = (await getRequest(ctx.db, requestId)) ?? request;
  if (now.failReason === REFUND_REQUESTED && now.status !== 'success') return outcome(now);
  if (decision !== 'waiting' && decision?.kind === 'unknown') throw requestNotFound(requestId);
  // Moved on meanwhile (filled, refunded for another reason): the same refusal as had it been so at first.
  refuseUnlessPending(now);
  if (decision === 'waiting' || decision === undefined || decision.kind === 'accepted')
    throw new GatewayError('SERVICE_UNAVAILABLE', `The refund of request ${requestId} could not be decided; retry`);
  throw new GatewayError(
    'CONFLICT',
    `Request ${requestId} is being filled: a refund can be asked for only while the solver holds the request`,
  );
}

/** `CONFLICT` for a request that is not `pending`: nothing to refund, or it is filled, being filled or refunded. */
function refuseUnlessPending(request: RequestRecord): void {
  const id = request.id;
  switch (request.status) {
    case 'pending':
      return;
    case 'waiting':
    case 'depositing':
      throw new GatewayError('CONFLICT', `Request ${id} has no deposit to refund (status ${request.status})`);
    case 'submitted':
      throw new GatewayError('CONFLICT', `Request ${id} is being filled; it cannot be refunded`);
    case 'success':
      throw new GatewayError('CONFLICT', `Request ${id} is filled; it cannot be refunded`);
    case 'refund':
      throw new GatewayError('CONFLICT', `Request ${id} is already refunded`);
    case 'failure':
    case 'fallback':
      throw new GatewayError(
        'CONFLICT',
        request.refundFailReason === null
          ? `Request ${id} failed and its refund is under way`
          : `Request ${id} failed and its refund could not be made (${request.refundFailReason})`,
      );
  }
}

/** The answer for a request whose refund was asked for: refunded, under way, or failed (too small to refund). */
function outcome(request: RequestRecord): RequestRefundReturnType {
  const refunded = request.status === 'refund';
  const message = refunded
    ? 'Refunded'
    : request.status === 'pending'
      ? 'Refund accepted; it is under way'
      : `The refund could not be made (${request.refundFailReason ?? 'UNKNOWN'})`;
  return {
    message,
    requestId: request.id,
    status: request.status,
    refundTxHash: refunded ? (request.txHashes.at(-1) ?? null) : null,
  };
}
