import { parseUnits, type Hex } from 'viem';
import { getRequest } from '../../store/requests.repository.js';
import { availableAppBalanceUsd, lockAppWallet } from '../../store/appFeeClaims.repository.js';
import {
  lockApiKeyForFastFill,
  markFastFilled,
  sumFastFillsAwaitingDeposit,
} from '../../store/fastFills.repository.js';
import { statusChangeOf, writeStatusChange } from '../status/statusChange.js';
import type { RequestRecord } from '../../records/request.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import type { Caller } from '../vocabulary/caller.js';
import { parseRequestId } from '../vocabulary/requestId.js';
import { parseUint } from '../inputs.js';

export interface FastFillParameters {
  requestId: string;
  /** Informational (the input the solver receives on the origin); the quoted amounts apply. */
  solverInputCurrencyAmount?: bigint | undefined;
  /** Per-request cap on the value put at risk, decimal USD. */
  maxFillAmountUsd?: number | undefined;
}

export interface FastFillReturnType {
  message: string;
}

/**
 * Fast fill (`POST /fast-fill`): fills a `waiting` request at once, before its deposit is confirmed (or even
 * sent), against the API key's fast-fill limit. Only requests quoted with that key qualify. The request's input
 * value (USD at quote time) is held against the key until a deposit that matches the order arrives (dust or a
 * deposit elsewhere does not release it); a fast fill whose deposit never lands is the key owner's loss, as with
 * the reference. Idempotent: a request already fast-filled answers success again.
 */
export async function fastFill(
  ctx: CoreContext,
  params: FastFillParameters,
  caller: Caller,
): Promise<FastFillReturnType> {
  // The body first, as REST's schema does before anything else: the same refusal on every transport.
  const requestId = parseRequestId(params.requestId);
  if (params.solverInputCurrencyAmount !== undefined)
    parseUint(params.solverInputCurrencyAmount, 'solverInputCurrencyAmount');
  if (
    params.maxFillAmountUsd !== undefined &&
    !(Number.isFinite(params.maxFillAmountUsd) && params.maxFillAmountUsd > 0)
  ) {
    throw new GatewayError('INVALID_INPUT', 'maxFillAmountUsd must be a positive decimal number of USD', {
      data: 'maxFillAmountUsd',
    });
  }
  const key = caller.apiKey;
  if (key === null) throw new GatewayError('UNAUTHORIZED', 'Unauthorized: fast fill needs an x-api-key');
  if (key.fastFillLimitUsdMicros === null)
    throw new GatewayError('FORBIDDEN', 'Fast fill is not enabled for this API key');
  const lifecycle = ctx.solving.running?.fastFiller;
  if (lifecycle === undefined)
    throw new GatewayError('SERVICE_UNAVAILABLE', 'The solver is not running on this gateway');

  const request = await getRequest(ctx.db, requestId);
  if (request === undefined) throw new GatewayError('NOT_FOUND', `Request not found: ${requestId}`);
  // A key vouches only for its own customers' orders: those quoted with it.
  if (request.apiKeyId !== key.id)
    throw new GatewayError('FORBIDDEN', 'Fast fill is allowed only for requests quoted with this API key');
  if (request.fastFill !== null) return { message: 'Request already fast-filled.' };
  if (request.status !== 'waiting')
    throw new GatewayError('CONFLICT', `Conflict: this request is already being processed (status ${request.status})`);
  if (
    params.maxFillAmountUsd !== undefined &&
    request.volumeUsdMicros > parseUnits(params.maxFillAmountUsd.toFixed(6), 6)
  ) {
    throw new GatewayError(
      'INVALID_INPUT',
      `The request is worth more than maxFillAmountUsd (${params.maxFillAmountUsd} USD)`,
      { data: 'maxFillAmountUsd' },
    );
  }

  const blocked = await lifecycle.checkFill(request.id as Hex);
  if (blocked !== null) {
    throw new GatewayError(
      blocked.failReason === 'SOLVER_BALANCE_TOO_LOW' ? 'INSUFFICIENT_LIQUIDITY' : 'CONFLICT',
      `The request cannot be filled now: ${blocked.message}`,
      {
        data: blocked.failReason,
      },
    );
  }
  const claim = await claimFastFill(ctx, request, {
    apiKeyId: key.id,
    limitUsdMicros: key.fastFillLimitUsdMicros,
    appWallet: key.payoutAddress ?? null,
  });
  if (!claim.claimed) {
    if (claim.reason === 'over-limit') {
      throw new GatewayError(
        'FORBIDDEN',
        "This fast fill would exceed the API key's limit of fast fills awaiting their deposits",
        {
          data: `outstandingUsdMicros=${claim.outstandingUsdMicros}`,
        },
      );
    }
    if (claim.reason === 'over-balance') {
      throw new GatewayError(
        'INSUFFICIENT_FUNDS',
        "The app-fee balance of this API key's wallet does not cover this fast fill",
        { data: `availableUsdMicros=${claim.availableUsdMicros}` },
      );
    }
    if (claim.request?.fastFill !== null && claim.request?.fastFill !== undefined)
      return { message: 'Request already fast-filled.' };
    throw new GatewayError('CONFLICT', 'Conflict: this request is already being processed');
  }
  lifecycle.fillNow(request.id as Hex);
  return { message: 'Request successfully queued for fast fill.' };
}

/** What a fast fill's claim found. */
type FastFillClaim =
  | { claimed: true; request: RequestRecord }
  | { claimed: false; reason: 'not-waiting'; request: RequestRecord | undefined }
  | { claimed: false; reason: 'over-limit'; outstandingUsdMicros: bigint }
  | { claimed: false; reason: 'over-balance'; availableUsdMicros: bigint };

/**
 * Claims a `waiting` request for a fast fill, in one transaction under the key's lock (two fast fills of one key
 * cannot both pass the check): the request's value is held against the key only when its fast fills awaiting their
 * deposits (`fastFillHoldingStatuses`) stay within its limit and, with `appWallet` (the key's payout wallet, lower
 * case), when that wallet's app-fee balance covers it (under the wallet's lock, as app-fee claims take it, so both
 * cannot spend one balance).
 */
async function claimFastFill(
  ctx: CoreContext,
  request: RequestRecord,
  key: { apiKeyId: string; limitUsdMicros: bigint; appWallet: string | null },
): Promise<FastFillClaim> {
  const usdMicros = request.volumeUsdMicros;
  return ctx.db.transaction().execute(async (trx): Promise<FastFillClaim> => {
    await lockApiKeyForFastFill(trx, key.apiKeyId);
    const outstanding = await sumFastFillsAwaitingDeposit(trx, key.apiKeyId);
    if (outstanding + usdMicros > key.limitUsdMicros)
      return { claimed: false, reason: 'over-limit', outstandingUsdMicros: outstanding };
    if (key.appWallet !== null) {
      await lockAppWallet(trx, key.appWallet);
      const available = await availableAppBalanceUsd(trx, key.appWallet);
      if (available < usdMicros) return { claimed: false, reason: 'over-balance', availableUsdMicros: available };
    }
    const moved = await writeStatusChange(trx, statusChangeOf(request, 'fastFill', {}, ctx.now()));
    if (moved === null) return { claimed: false, reason: 'not-waiting', request: await getRequest(trx, request.id) };
    return { claimed: true, request: await markFastFilled(trx, request.id, { apiKeyId: key.apiKeyId, usdMicros }) };
  });
}
