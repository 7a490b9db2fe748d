import type { Hex } from 'viem';
import type { ChainConfig, CurrencyConfig } from '../chains/types.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { reservePermitDeadline } from './deadlines.js';
import type { PermitStandard } from '../ports/permits.js';
import { checkNoRecentPermitRevert } from './revertCooldown.js';
import { defaultPermitSettings, minPermitValiditySeconds } from './settings.js';
import type { StoredPermit } from './typedData.js';

/** The permit validity a quote gives when it names no `permitExpiry` (the reference's default). */
export const DEFAULT_PERMIT_EXPIRY_SECONDS = 600;

export interface QuotePermitParameters {
  origin: ChainConfig;
  currencyIn: CurrencyConfig;
  /** The order's user: the signer. */
  user: Hex;
  amountIn: bigint;
  standard: PermitStandard;
  domain: { name: string; version: string };
  requestId: Hex;
  /** The quote's clock and its request's deadline, Unix seconds. */
  nowSeconds: number;
  deadline: number;
  /** The client's `permitExpiry`, seconds. */
  permitExpiry: number | undefined;
  /** The quote's `ttl` as the client gave it (for the error's field). */
  ttl: number | undefined;
}

/**
 * The permit a `usePermit` quote asks the user to sign (stored with the request): to the origin's approval proxy,
 * exactly the input, valid for `permitExpiry` but never past the quote's deadline, and a message no other request
 * has. An EIP-3009 authorization's nonce is the request id (a bytes32 the user's wallet has never used for
 * another request, unique as the id is); an EIP-2612 permit carries the token's nonce, so its deadline is made
 * unique instead (`reservePermitDeadline`).
 *
 * Refused `INVALID_INPUT` when the permit would be valid for less than the time its deposit needs to be mined
 * (`minPermitValiditySeconds`): a `permitExpiry`, or a quote `ttl`, below it; and `INVALID_INPUT` on `usePermit`
 * while the user's permits are barred after a reverted deposit.
 */
export async function quotePermit(ctx: CoreContext, params: QuotePermitParameters): Promise<StoredPermit> {
  const { origin, currencyIn, user, standard, requestId, nowSeconds } = params;
  const minimum = minPermitValiditySeconds(ctx.config.permits ?? defaultPermitSettings, origin.blockTime);
  const asked = params.permitExpiry ?? DEFAULT_PERMIT_EXPIRY_SECONDS;
  // The gateway pays the permit's deposit: one that expires before it is mined reverts at the solver's cost.
  if (!Number.isSafeInteger(asked) || asked < minimum) {
    throw new GatewayError(
      'INVALID_INPUT',
      `permitExpiry must be a whole number of seconds, at least ${minimum} on chain ${origin.id} (the time the ` +
        `gateway's deposit needs to be mined before the permit expires), got ${asked}`,
      { data: 'permitExpiry' },
    );
  }
  if (params.deadline - nowSeconds < minimum) {
    throw new GatewayError(
      'INVALID_INPUT',
      `usePermit needs a quote valid for at least ${minimum} s on chain ${origin.id} (the time the gateway's ` +
        `deposit needs to be mined), got a ttl of ${params.ttl ?? params.deadline - nowSeconds} s`,
      { data: 'ttl' },
    );
  }
  const latest = Math.min(params.deadline, nowSeconds + asked);
  const [nonce] = await Promise.all([
    standard === 'eip3009'
      ? requestId
      : ctx.permitChain!.permitNonce(origin.id, currencyIn.address, user).then((n) => n.toString()),
    checkNoRecentPermitRevert(ctx, user, 'quote'),
  ]);
  const key = { chainId: origin.id, token: currencyIn.address, owner: user, nonce };
  const expiry =
    standard === 'eip3009'
      ? latest
      : await reservePermitDeadline(ctx, key, { earliest: nowSeconds + minimum, latest }, requestId);
  return {
    kind: standard,
    chainId: origin.id,
    token: currencyIn.address,
    owner: user,
    spender: origin.contracts.approvalProxy,
    value: params.amountIn.toString(),
    expiry: String(expiry),
    nonce,
    domain: params.domain,
  };
}
