import { isAddressEqual, recoverTypedDataAddress, type Address, type Hex } from 'viem';
import { getPermit, insertPermit } from '../../store/permits.repository.js';
import type { PermitRecord } from '../../records/permit.js';
import type { RequestRecord } from '../../records/request.js';
import { getRequest } from '../../store/requests.repository.js';
import { isUniqueViolation } from '../../store/errors.js';
import { requireChain } from '../chains/requireChain.js';
import type { CoreContext } from '../context.js';
import { GatewayError, isGatewayError } from '../errors.js';
import type { PermitChain, PermitStandard } from '../ports/permits.js';
import { permitDepositCalldata, permitTypedData, type StoredPermit } from './typedData.js';
import type { PermitKind, SubmitPermitInput, SubmitPermitResult } from './types.js';
import { withGasMargin } from '../gasMargin.js';
import { statusChangeOf, writeStatusChange } from '../status/statusChange.js';
import { checkNoRecentPermitRevert } from './revertCooldown.js';
import { defaultPermitSettings, minPermitValiditySeconds } from './settings.js';

const refused = (reason: string, message: string) => new GatewayError('PERMIT_FAILED', message, { data: reason });

/**
 * A permit deposit (`eip3009` or `eip2612`): the user signed the permit the quote gave them; the gateway checks
 * it against the stored message and the chain, records it together with the request's move `waiting ->
 * depositing` (before anything is sent: a restart finds it), then submits the deposit through the approval
 * proxy from the solver's origin sender, which pays the gas (priced into the quote's execution fee).
 *
 * Refused with `PERMIT_FAILED` (400, `errorData` says why) and nothing recorded or sent: a signature that does
 * not recover to the order's user over the quoted message (another key, or a tampered message such as another
 * amount or payee), a permit or quote that expired or has less validity left than its deposit needs to be mined,
 * a user whose permit deposit reverted within the cooldown, a nonce already used on chain, a permit that does not
 * match the order, or a deposit the chain would reject. A request that is not `waiting` is `CONFLICT` (409); the
 * same signature posted again is accepted again without a second deposit.
 */
export function depositPermitKind(kind: PermitStandard): PermitKind {
  return {
    async submit(ctx: CoreContext, input: SubmitPermitInput): Promise<SubmitPermitResult> {
      const request = await getRequest(ctx.db, input.requestId);
      if (request === undefined) throw new GatewayError('NOT_FOUND', `Request ${input.requestId} not found`);
      const permit = storedPermitOf(request);
      if (permit === undefined || permit.kind !== kind) {
        throw new GatewayError(
          'INVALID_INPUT',
          permit === undefined
            ? `Request ${request.id} was not quoted with usePermit; it is paid by a deposit transaction`
            : `Request ${request.id} was quoted for a '${permit.kind}' permit, not '${kind}'`,
          { data: 'kind' },
        );
      }
      const signature = input.signature.toLowerCase() as Hex;

      const earlier = await getPermit(ctx.db, request.id);
      if (earlier !== undefined) return again(earlier, signature);
      if (request.status !== 'waiting') {
        throw new GatewayError(
          'CONFLICT',
          `Request ${request.id} is ${request.status}, not waiting for its deposit; nothing was sent`,
          { data: 'REQUEST_NOT_WAITING' },
        );
      }
      const depositor = ctx.solving.running?.permitDepositor;
      if (depositor === undefined) {
        throw new GatewayError('SERVICE_UNAVAILABLE', 'The solver is not running on this instance; try again later');
      }

      checkMatchesOrder(ctx, request, permit);
      checkValidityLeft(ctx, request, permit);
      const signer = await recoverSigner(permit, signature);
      if (!isAddressEqual(signer, permit.owner)) {
        throw refused(
          'INVALID_SIGNATURE',
          `The signature is not the order's user's (${permit.owner}) over the quoted permit: it recovers to ${signer}`,
        );
      }
      await checkNoRecentPermitRevert(ctx, permit.owner, 'submission');
      await checkNonceUnused(ctx, permit);

      // The chain has the last word (balance, token rules): a deposit it would reject is refused now.
      const chain = requireChain(ctx, permit.chainId);
      const data = permitDepositCalldata(permit, request.id as Hex, signature);
      let estimate: bigint;
      try {
        estimate = await ctx.market.estimateGas(chain.id, {
          from: ctx.config.solverAddress,
          to: chain.contracts.approvalProxy,
          data,
          value: 0n,
        });
      } catch (error) {
        if (isGatewayError(error) && error.code === 'DESTINATION_TX_FAILED') {
          throw refused('DEPOSIT_WOULD_FAIL', `The permit deposit would fail on chain ${chain.id}: ${error.message}`);
        }
        throw error;
      }
      const gas = withGasMargin(estimate);

      const accepted = await ctx.db
        .transaction()
        .execute(async (trx) => {
          const moved = await writeStatusChange(trx, statusChangeOf(request, 'startDeposit', {}, ctx.now()));
          if (moved === null) return null;
          return insertPermit(trx, {
            requestId: request.id,
            chainId: chain.id,
            kind,
            owner: permit.owner,
            signature,
            call: { to: chain.contracts.approvalProxy, data, gas: gas.toString() },
            now: ctx.now(),
          });
        })
        .catch((error: unknown) => {
          if (isUniqueViolation(error)) return null;
          throw error;
        });
      if (accepted === null) {
        // Another post for the request won the race (or the request moved on meanwhile).
        const winner = await getPermit(ctx.db, request.id);
        if (winner !== undefined) return again(winner, signature);
        throw new GatewayError('CONFLICT', `Request ${request.id} is no longer waiting for its deposit`, {
          data: 'REQUEST_NOT_WAITING',
        });
      }
      ctx.log.info({ requestId: request.id, kind, chainId: chain.id }, 'permit accepted; submitting its deposit');
      depositor.submit(request.id as Hex);
      return { message: 'Permit accepted; the deposit is being submitted' };
    },
  };
}

/** The same signature again is a no-op success (it is submitted once); another one is a conflict. */
function again(earlier: PermitRecord, signature: Hex): SubmitPermitResult {
  if (earlier.signature !== signature) {
    throw new GatewayError(
      'CONFLICT',
      `Request ${earlier.requestId} already has an accepted permit; nothing was sent`,
      { data: 'REQUEST_NOT_WAITING' },
    );
  }
  if (earlier.status === 'failed') {
    throw refused(
      'DEPOSIT_REVERTED',
      `The deposit of this permit failed: it reverted on chain, or the permit was no longer valid on chain when ` +
        `its deposit was due (nothing sent); ask for a new quote`,
    );
  }
  return { message: 'Permit already accepted; its deposit is submitted once' };
}

export function storedPermitOf(request: RequestRecord): StoredPermit | undefined {
  const permit = request.quote.permit;
  if (permit === undefined || permit === null || typeof permit !== 'object' || Array.isArray(permit)) return undefined;
  return permit as unknown as StoredPermit;
}

/** The stored permit pays exactly the order: its user, its input amount, its token, to this chain's proxy. */
function checkMatchesOrder(ctx: CoreContext, request: RequestRecord, permit: StoredPermit): void {
  const chain = requireChain(ctx, request.originChainId);
  const mismatch =
    permit.chainId !== request.originChainId
      ? 'chain'
      : !isAddressEqual(permit.token, request.originCurrency as Address)
        ? 'token'
        : !isAddressEqual(permit.owner, request.user as Address)
          ? 'owner'
          : BigInt(permit.value) !== request.amountIn
            ? 'amount'
            : !isAddressEqual(permit.spender, chain.contracts.approvalProxy)
              ? 'recipient'
              : undefined;
  if (mismatch !== undefined) {
    throw refused('PERMIT_MISMATCH', `The permit's ${mismatch} differs from the order of request ${request.id}`);
  }
}

/**
 * The permit (and its request) must stay valid long enough for the deposit to be mined
 * (`minPermitValiditySeconds`): the solver sends it and pays its gas, so a permit posted in its last seconds would
 * make the deposit revert at the solver's cost. Refused `EXPIRED` before anything is recorded or sent.
 */
function checkValidityLeft(ctx: CoreContext, request: RequestRecord, permit: StoredPermit): void {
  const chain = requireChain(ctx, permit.chainId);
  const minimum = minPermitValiditySeconds(ctx.config.permits ?? defaultPermitSettings, chain.blockTime);
  const permitUntil = BigInt(permit.expiry);
  const requestUntil = BigInt(Math.floor(request.expiresAt / 1000));
  const left = (permitUntil < requestUntil ? permitUntil : requestUntil) - BigInt(Math.floor(ctx.now() / 1000));
  if (left <= 0n) throw refused('EXPIRED', `The permit of request ${request.id} has expired; ask for a new quote`);
  if (left < BigInt(minimum)) {
    throw refused(
      'EXPIRED',
      `The permit of request ${request.id} is valid for ${left} s more, less than the ${minimum} s its deposit ` +
        `needs to be mined on chain ${chain.id}; nothing was sent, ask for a new quote`,
    );
  }
}

async function recoverSigner(permit: StoredPermit, signature: Hex): Promise<Address> {
  try {
    const typed = permitTypedData(permit);
    /* eslint-disable @typescript-eslint/no-unnecessary-type-assertion -- tsc needs them (a union of two typed-data shapes) */
    return await recoverTypedDataAddress({
      domain: typed.domain,
      types: typed.types as Record<string, ReadonlyArray<{ name: string; type: string }>>,
      primaryType: typed.primaryType,
      message: typed.message as Record<string, unknown>,
      signature,
    });
    /* eslint-enable @typescript-eslint/no-unnecessary-type-assertion */
  } catch (error) {
    throw refused('INVALID_SIGNATURE', `The signature is not a valid ECDSA signature: ${(error as Error).message}`);
  }
}

/**
 * The permit's nonce must still be unused on chain (a replay, or a cancelled authorization, is refused). One
 * exception: an EIP-2612 permit anyone can submit to the token itself, which uses its nonce and sets the allowance
 * it grants; when the proxy already has that allowance, the deposit can still be made (the proxy falls back to the
 * allowance), so the permit is not refused for its nonce and the simulation decides.
 */
async function checkNonceUnused(ctx: CoreContext, permit: StoredPermit): Promise<void> {
  const chain = ctx.permitChain;
  if (chain === undefined) throw new GatewayError('SERVICE_UNAVAILABLE', 'Permits are not available on this instance');
  if (await permitNonceUsed(chain, permit)) {
    throw refused('NONCE_USED', `The permit's nonce ${permit.nonce} is already used on chain ${permit.chainId}`);
  }
}

/** Whether the permit can no longer be redeemed for its nonce (see `checkNonceUnused` for the EIP-2612 exception). */
export async function permitNonceUsed(chain: PermitChain, permit: StoredPermit): Promise<boolean> {
  return permit.kind === 'eip3009'
    ? chain.authorizationUsed(permit.chainId, permit.token, permit.owner, permit.nonce as Hex)
    : (await chain.permitNonce(permit.chainId, permit.token, permit.owner)) !== BigInt(permit.nonce) &&
        (await chain.allowance(permit.chainId, permit.token, permit.owner, permit.spender)) < BigInt(permit.value);
}
