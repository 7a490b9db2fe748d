/**
 * Conversions shared by the row mappers. Both drivers are normalised here, in one place:
 * `pg` returns int8 and numeric as strings; PGlite returns int8 as a number (a bigint above 2^53)
 * and numeric as a string.
 */

/** The largest amount a numeric(78,0) amount column holds: every amount is a uint256 on chain. */
const maxUint256 = (1n << 256n) - 1n;

/** An int8 or numeric value as a bigint (amounts, block numbers, nonces). */
export const toBigInt = (value: string | number | bigint): bigint =>
  typeof value === 'bigint' ? value : BigInt(value);

/** An int8 value that is known to stay below 2^53 (Unix milliseconds, serial ids) as a number. */
export const toNumber = (value: string | number | bigint): number => {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new RangeError(`int8 value ${String(value)} is not a safe integer`);
  return n;
};

export const toNumberOrNull = (value: string | number | bigint | null): number | null =>
  value === null ? null : toNumber(value);

/**
 * Hex strings (EVM addresses, hashes, request and order ids) are stored lower case, so that lookups and
 * filters match whatever checksum casing a client sends. Anything else (for example a base58 address of
 * another VM) is case-sensitive and kept as given.
 */
export const normalizeHex = (value: string): string => (/^0x[0-9a-fA-F]*$/.test(value) ? value.toLowerCase() : value);

export const normalizeHexOrNull = (value: string | null | undefined): string | null =>
  value === null || value === undefined ? null : normalizeHex(value);

/** A uint256 amount as the decimal string a numeric(78,0) column takes; rejects what the column would. */
export const toUint256 = (value: bigint): string => {
  if (value < 0n || value > maxUint256) throw new RangeError(`amount ${value} is outside uint256`);
  return value.toString();
};

/** JSON text for a jsonb column (pg would send a JS array as a PostgreSQL array, not JSON). */
export const toJson = (value: unknown): string => JSON.stringify(value);

/** Records of several requests (a listing's page) by request id, each list in the order given. */
export function groupByRequest<T extends { requestId: string }>(records: readonly T[]): Map<string, T[]> {
  const byRequest = new Map<string, T[]>();
  for (const record of records) {
    const list = byRequest.get(record.requestId);
    if (list === undefined) byRequest.set(record.requestId, [record]);
    else list.push(record);
  }
  return byRequest;
}
