import { sql, type RawBuilder } from 'kysely';
import { toJson } from './mappers.js';

/**
 * SQL for a jsonb array column with `value` appended, unless the array already holds it. Evaluated in the
 * UPDATE itself, so concurrent appends (a re-read deposit, a gas bump) never lose or duplicate an element.
 */
export function appendUnique(column: string, value: string): RawBuilder<string> {
  const ref = sql.ref(column);
  const element = sql`cast(${toJson([value])} as jsonb)`;
  return sql<string>`case when ${ref} @> ${element} then ${ref} else ${ref} || ${element} end`;
}
