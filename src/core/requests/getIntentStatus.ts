import type { Kysely } from 'kysely';
import type { RequestRecord } from '../../records/request.js';
import { coalescedRequestReads } from '../../store/requests.repository.js';
import type { Tables } from '../../store/tables.js';
import type { CoreContext } from '../context.js';
import { parseRequestId, requestNotFound } from '../vocabulary/requestId.js';
import { statusFieldsOf } from './statusRules.js';
import type { IntentStatus } from './types.js';
import type { DexLegRecord } from '../dex/legRecord.js';
import { discoverSameChainSwap, sameChainLegOf } from '../solver/sameChainSwap.js';

export interface GetIntentStatusParameters {
  requestId: string;
}
export type GetIntentStatusReturnType = IntentStatus;

/**
 * The status of one request (`GET /intents/status/v3`, GraphQL `requestStatus`): what the SDK polls after the
 * deposit. Fail reasons follow the status rules: `N/A` unless the status is `failure`, `fallback` or `refund`,
 * where it is the recorded reason or `UNKNOWN`; `refundFailReason` is the recorded one or `N/A`.
 *
 * @throws `INVALID_INPUT` (400) for an id that is not 32-byte hex; `NOT_FOUND` (404) for an unknown id.
 */
export async function getIntentStatus(
  ctx: CoreContext,
  params: GetIntentStatusParameters,
): Promise<GetIntentStatusReturnType> {
  const record = await requireRequest(ctx, params.requestId);
  if (record.status === 'waiting') {
    const leg = sameChainLegOf(record);
    // A same-chain DEX swap announces itself by no deposit: the poll looks for it (once at a time per request).
    if (leg !== undefined && (await discoverOnce(ctx, record, leg)))
      return toIntentStatus(await requireRequest(ctx, params.requestId));
  }
  return toIntentStatus(record);
}

const discovering = new WeakMap<CoreContext, Map<string, Promise<void>>>();

/** Runs `discoverSameChainSwap` for the request unless one is under way; whether this call ran it. */
async function discoverOnce(ctx: CoreContext, record: RequestRecord, leg: DexLegRecord): Promise<boolean> {
  let running = discovering.get(ctx);
  if (running === undefined) discovering.set(ctx, (running = new Map<string, Promise<void>>()));
  const under = running.get(record.id);
  if (under !== undefined) {
    await under;
    return true;
  }
  const search = discoverSameChainSwap(ctx, record, leg)
    .catch((error: unknown) => ctx.log.warn({ err: error, requestId: record.id }, 'same-chain swap search failed'))
    .finally(() => running.delete(record.id));
  running.set(record.id, search);
  await search;
  return true;
}

/**
 * The status reads of one database, coalesced (`coalescedRequestReads`): the reads asked for while one is under way
 * (clients polling their requests' status) go together in one statement. On PGlite every statement waits behind
 * every other, so polls read one by one held each other and the solver's writes behind them. Kept per database
 * handle, which lives as long as its context.
 */
const statusReads = new WeakMap<Kysely<Tables>, (id: string) => Promise<RequestRecord | undefined>>();

function readRequest(db: Kysely<Tables>, id: string): Promise<RequestRecord | undefined> {
  let read = statusReads.get(db);
  if (read === undefined) statusReads.set(db, (read = coalescedRequestReads(db)));
  return read(id);
}

/** The stored request of a client-given id, or `INVALID_INPUT` / `NOT_FOUND`. */
export async function requireRequest(ctx: CoreContext, requestId: string): Promise<RequestRecord> {
  const id = parseRequestId(requestId);
  const record = await readRequest(ctx.db, id);
  if (record === undefined) throw requestNotFound(id);
  return record;
}

/** The status record of a stored request. */
export function toIntentStatus(record: RequestRecord): IntentStatus {
  return { requestId: record.id, ...statusFieldsOf(record), quoteCreatedAt: record.createdAt };
}
