/**
 * Whether `error` is PostgreSQL's unique violation (SQLSTATE 23505), optionally of one named constraint or
 * unique index. Both drivers (pg and PGlite) put `code` and `constraint` on their errors.
 */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { code?: unknown; constraint?: unknown };
  return e.code === '23505' && (constraint === undefined || e.constraint === constraint);
}

/**
 * A `continuation` given to `listRequests` that it did not make, or made for another sort. The core answers it as
 * `INVALID_INPUT` with this message (the store knows no wire error codes).
 */
export class InvalidContinuationError extends Error {
  override readonly name = 'InvalidContinuationError';
}
