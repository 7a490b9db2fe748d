/**
 * Whether `error` is PostgreSQL's unique violation (SQLSTATE 23505), optionally of one named constraint or
 * unique index. Both drivers (pg and PGlite) put `code` and `constraint` on their errors.
 */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { code?: unknown; constraint?: unknown };
  return e.code === '23505' && (constraint === undefined || e.constraint === constraint);
}
