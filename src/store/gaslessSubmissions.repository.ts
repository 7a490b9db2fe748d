import type { ColumnType, Kysely, Selectable } from 'kysely';
import { normalizeHex, toBigInt, toJson, toNumber } from './mappers.js';
import type { JsonObject } from '../records/json.js';
import type { Tables } from './tables.js';

/** `gasless_submissions` (migration 1100); declared here because only this module touches it. */
interface GaslessSubmissionsTable {
  request_id: string;
  chain_id: string | number | bigint;
  user_address: string;
  api_key_id: string | null;
  payload: JsonObject;
  /** Fee sponsorship drawn from `api_key_id` for this batch, micro-USD (migration 1400; 0 when not sponsored). */
  sponsored_usd_micros: ColumnType<string, string | undefined, string>;
  created_at: string | number | bigint;
}

/** An accepted gasless batch: what to send, for whom, and who pays its gas. */
export interface GaslessSubmissionRecord {
  requestId: string;
  chainId: number;
  user: string;
  apiKeyId: string | null;
  payload: JsonObject;
  /** Fee sponsorship drawn from `apiKeyId` for this batch (micro-USD); 0 when the request's output pays. */
  sponsoredUsdMicros: bigint;
  createdAt: number;
}

const withSubmissions = (db: Kysely<Tables>) => db.withTables<{ gasless_submissions: GaslessSubmissionsTable }>();

/** Records an accepted batch (inside the transaction that moves its request to `depositing`). */
export async function insertGaslessSubmission(
  db: Kysely<Tables>,
  params: Omit<GaslessSubmissionRecord, 'createdAt' | 'sponsoredUsdMicros'> & {
    sponsoredUsdMicros?: bigint;
    now: number;
  },
): Promise<void> {
  await withSubmissions(db)
    .insertInto('gasless_submissions')
    .values({
      request_id: normalizeHex(params.requestId),
      chain_id: params.chainId,
      user_address: params.user.toLowerCase(),
      api_key_id: params.apiKeyId,
      payload: toJson(params.payload) as unknown as JsonObject,
      sponsored_usd_micros: (params.sponsoredUsdMicros ?? 0n).toString(),
      created_at: params.now,
    })
    .execute();
}

export async function getGaslessSubmission(
  db: Kysely<Tables>,
  requestId: string,
): Promise<GaslessSubmissionRecord | undefined> {
  const row = await withSubmissions(db)
    .selectFrom('gasless_submissions')
    .selectAll()
    .where('request_id', '=', normalizeHex(requestId))
    .executeTakeFirst();
  return row === undefined ? undefined : toRecord(row);
}

/** Removes a submission whose batch was never sent (the node refused it): its request is `waiting` again. */
export async function deleteGaslessSubmission(db: Kysely<Tables>, requestId: string): Promise<void> {
  await withSubmissions(db)
    .deleteFrom('gasless_submissions')
    .where('request_id', '=', normalizeHex(requestId))
    .execute();
}

/** Submissions whose request is still `depositing`: the batches a restart must send or follow. */
export async function listDepositingGaslessSubmissions(db: Kysely<Tables>): Promise<GaslessSubmissionRecord[]> {
  const rows = await withSubmissions(db)
    .selectFrom('gasless_submissions as g')
    .innerJoin('requests as r', 'r.id', 'g.request_id')
    .selectAll('g')
    .where('r.status', '=', 'depositing')
    .orderBy('g.created_at')
    .execute();
  return rows.map(toRecord);
}

function toRecord(row: Selectable<GaslessSubmissionsTable>): GaslessSubmissionRecord {
  return {
    requestId: row.request_id,
    chainId: toNumber(row.chain_id),
    user: row.user_address,
    apiKeyId: row.api_key_id,
    payload: row.payload,
    sponsoredUsdMicros: toBigInt(row.sponsored_usd_micros),
    createdAt: toNumber(row.created_at),
  };
}
