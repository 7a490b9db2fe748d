import { sql, type RawBuilder } from 'kysely';
import { toJson } from './mappers.js';

/**
 * SQL for a jsonb array column with `value` appended, unless the array already holds it. Evaluated in the
 * UPDATE itself, so concurrent appends (a re-read deposit, a gas bump) never lose or duplicate an element.
 * `value` is a string, or SQL for one (a column of the statement's other rows: `sql.ref('v.hash')`).
 */
export function appendUnique(column: string, value: string | RawBuilder<unknown>): RawBuilder<string> {
  const ref = sql.ref(column);
  const element = typeof value === 'string' ? sql`cast(${toJson([value])} as jsonb)` : sql`jsonb_build_array(${value})`;
  return sql<string>`case when ${ref} @> ${element} then ${ref} else ${ref} || ${element} end`;
}
