/** A JSON value as stored in a jsonb column (no bigint: amounts inside JSON are decimal strings). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };
