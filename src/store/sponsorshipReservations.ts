/**
 * Fee sponsorship reserved by sponsored quotes (migration `2026_11_29_1100`). A sponsored quote's request is stored
 * with its reservation, in the statement that adds it to its API key's `sponsorship_reserved_usd_micros` if the rest
 * of the allowance covers it (`insertSponsoredRequest` in `requests.repository.ts`). The reservation then ends once:
 * released (back to the key) when the request fails, is refunded, or expires unpaid, or drawn (moved to the key's
 * `sponsorship_spent_usd_micros`) when it fills. Each end is written in the statement or the transaction of the change
 * that causes it: the status moves of `requests.repository.ts` (`settleSponsorships`), the deletes of requests nobody
 * paid (`releasedReservationsOf`) and the expiry sweep (`releaseExpiredSponsorships`).
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Tables } from './tables.js';

/** What a request row says of its reservation (the columns of `requests`). */
export interface SponsorshipColumns {
  status: string;
  sponsorship_state: string | null;
}

/**
 * Whether a request's row, just moved to its status, ends its reservation: a `reserved` one at `failure`, `refund` or
 * `fallback` (released) or at `success` (drawn); a `released` one at `success` too (drawn: the sponsor's share is booked with
 * every fill, so it is spent even when its reservation was given back first).
 */
export function settlesSponsorship(row: SponsorshipColumns): boolean {
  if (row.sponsorship_state === 'reserved') return settlingStatuses.has(row.status);
  return row.sponsorship_state === 'released' && row.status === 'success';
}

/** `success` draws; the failed statuses (`statusRules.ts`) release. */
const settlingStatuses: ReadonlySet<string> = new Set(['success', 'failure', 'refund', 'fallback']);

/**
 * Ends the reservations of the requests `ids` as their statuses say (`settlesSponsorship`), and updates their keys'
 * reserved and spent amounts, in one statement. Runs in the transaction that moved those requests, which holds their
 * rows: nothing else can change their reservations meanwhile, and the change commits with the move or not at all.
 */
export async function settleSponsorships(trx: Kysely<Tables>, ids: readonly string[]): Promise<void> {
  if (!trx.isTransaction) throw new Error('settleSponsorships runs in the transaction of the status change');
  if (ids.length === 0) return;
  await sql`
    with was as (
      select id, sponsorship_state from requests
      where id = any(${ids}::text[]) and sponsorship_state in ('reserved', 'released')
    ),
    settled as (
      update requests set sponsorship_state = case when requests.status = 'success' then 'drawn' else 'released' end
      from was
      where requests.id = was.id
        and (requests.status = 'success'
          or (was.sponsorship_state = 'reserved' and requests.status in ('failure', 'refund', 'fallback')))
      returning requests.api_key_id, requests.sponsorship_usd_micros, requests.status, was.sponsorship_state as was
    ),
    per_key as (
      select api_key_id,
        sum(case when was = 'reserved' then sponsorship_usd_micros else 0 end) as unreserved,
        sum(case when status = 'success' then sponsorship_usd_micros else 0 end) as drawn
      from settled group by api_key_id
    )
    update api_keys set
      sponsorship_reserved_usd_micros = greatest(sponsorship_reserved_usd_micros - per_key.unreserved, 0),
      sponsorship_spent_usd_micros = sponsorship_spent_usd_micros + per_key.drawn
    from per_key where api_keys.id = per_key.api_key_id`.execute(trx);
}

/**
 * The CTE body that gives back the open reservations of the requests a statement deletes: `gone` names the CTE of
 * the delete, returning the rows' `api_key_id`, `sponsorship_usd_micros` and `sponsorship_state`.
 */
export function releasedReservationsOf(gone: string): RawBuilder<unknown> {
  return sql`update api_keys set
      sponsorship_reserved_usd_micros = greatest(sponsorship_reserved_usd_micros - per_key.usd, 0)
    from (
      select api_key_id, sum(sponsorship_usd_micros) as usd from ${sql.table(gone)}
      where sponsorship_state = 'reserved' group by api_key_id
    ) as per_key
    where api_keys.id = per_key.api_key_id
    returning api_keys.id`;
}

export interface ReleaseExpiredSponsorshipsParameters {
  /** Reservations of `waiting` requests whose `expiresAt` is before this (Unix ms) are released. */
  expiredBefore: number;
  /** Only this key's (a quote refused for want of allowance reclaims its own first); every key's when absent. */
  apiKeyId?: string;
  /** Most requests one call releases. */
  limit: number;
}

/**
 * Releases the reservations of requests that expired unpaid (still `waiting` past their expiry: the solver fills no
 * request after its expiry, `validateFill`) and gives them back to their keys, in one statement. The request stays
 * (the retention job deletes it later). A request paid meanwhile is `pending` or further and keeps its reservation: the
 * condition is checked again on each row as it is locked. Returns the number of requests released.
 */
export async function releaseExpiredSponsorships(
  db: Kysely<Tables>,
  params: ReleaseExpiredSponsorshipsParameters,
): Promise<number> {
  const limit = Math.max(Math.trunc(params.limit), 0);
  if (limit === 0) return 0;
  const ofKey = params.apiKeyId === undefined ? sql`` : sql`and api_key_id = ${params.apiKeyId}`;
  const { rows } = await sql<{ released: string | number }>`
    with gone as (
      update requests set sponsorship_state = 'released'
      where id in (
        select id from requests
        where sponsorship_state = 'reserved' and status = 'waiting' and expires_at < ${params.expiredBefore} ${ofKey}
        limit ${limit}
      ) and sponsorship_state = 'reserved' and status = 'waiting'
      returning api_key_id, sponsorship_usd_micros, 'reserved' as sponsorship_state
    ),
    released as (${releasedReservationsOf('gone')})
    select count(*) as released from gone`.execute(db);
  return Number(rows[0]?.released ?? 0);
}
