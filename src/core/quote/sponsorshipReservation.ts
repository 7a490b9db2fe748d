import { getApiKey } from '../../store/apiKeys.repository.js';
import { insertSponsoredRequest, type InsertRequestParameters } from '../../store/requests.repository.js';
import { releaseExpiredSponsorships } from '../../store/sponsorshipReservations.js';
import { sponsorshipRemaining } from '../apiKeys/apiKey.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { toUsdMicros, type UsdPrice } from '../market.js';
import type { Pricing } from './pricing.js';
import type { ResolvedRoute } from '../vocabulary/route.js';

/**
 * What a sponsored quote reserves against its API key's sponsorship allowance: the USD value of what the sponsor pays
 * (micro-USD, rounded up, so a sponsored amount worth less than a micro-USD still needs allowance); 0 when the
 * sponsor pays nothing. The fill draws exactly this.
 */
export function sponsorshipReservation(pricing: Pricing, route: ResolvedRoute, priceIn: UsdPrice): bigint {
  const sponsored = pricing.sponsorship.sponsoredTotal;
  return sponsored > 0n ? toUsdMicros(sponsored, route.currencyIn.decimals, priceIn, 'up') : 0n;
}

/** Most expired reservations of its own a refused key gets back before its quote is tried again. */
const RECLAIM_LIMIT = 500;

/**
 * Stores a sponsored quote's request with its reservation of `usdMicros` against the quoting key's allowance, in one
 * statement (`insertSponsoredRequest`), so two racing quotes cannot overdraw it. When the rest of the allowance does
 * not cover it, the key's own reservations of requests that expired unpaid are given back first (the expiry sweep runs
 * every few minutes only) and the quote is tried once more.
 *
 * Throws `SPONSOR_BALANCE_TOO_LOW` (the reference's code, as a sponsored gasless batch; `errorData`
 * `remainingUsdMicros=<n>`) when the key still cannot cover it: nothing is stored or reserved then.
 */
export async function storeSponsoredRequest(
  ctx: Pick<CoreContext, 'db' | 'now' | 'log'>,
  request: InsertRequestParameters & { apiKeyId: string },
  usdMicros: bigint,
): Promise<void> {
  if (await insertSponsoredRequest(ctx.db, request, usdMicros)) return;
  // Only a help: when it fails (the retention job's sweep of the same rows, on PostgreSQL a deadlock between the two),
  // the quote is answered as if nothing had expired, and the sweep gives the reservations back.
  const reclaimed = await releaseExpiredSponsorships(ctx.db, {
    expiredBefore: ctx.now(),
    apiKeyId: request.apiKeyId,
    limit: RECLAIM_LIMIT,
  }).catch((error: unknown) => {
    ctx.log.warn({ err: error, apiKeyId: request.apiKeyId }, 'could not release the expired sponsorship of a key');
    return 0;
  });
  if (reclaimed > 0 && (await insertSponsoredRequest(ctx.db, request, usdMicros))) return;
  const key = await getApiKey(ctx.db, request.apiKeyId);
  const left = key === undefined || key.revokedAt !== null || !key.sponsorshipEnabled ? 0n : sponsorshipRemaining(key);
  throw new GatewayError(
    'SPONSOR_BALANCE_TOO_LOW',
    `The fees this quote sponsors (USD micros ${usdMicros}) are more than this API key's remaining sponsorship allowance (USD micros ${left}); nothing was stored`,
    { data: `remainingUsdMicros=${left}` },
  );
}
