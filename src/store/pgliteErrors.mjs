// PGlite's errors as plain data, for the worker thread (`pgliteWorker.mjs`) and the process that creates a new
// database (`pgliteInitialize.mjs`); `pgliteProxy.ts` rebuilds them. Plain JavaScript, as those two files are.

/**
 * An error as plain data: structured clone keeps only an Error's message and stack, and the store relies on
 * PGlite's DatabaseError fields (`code` '23505', `constraint`, ...). Every own primitive property crosses;
 * `query`, `params` and `queryOptions` do not (the main thread still has them).
 */
export function serializeError(error) {
  if (!(error instanceof Error)) return { message: String(error), props: {} };
  const props = {};
  for (const [key, value] of Object.entries(error)) {
    if (key === 'query' || key === 'params' || key === 'queryOptions') continue;
    if (value === undefined || value === null || typeof value === 'object' || typeof value === 'function') continue;
    if (typeof value === 'symbol') continue;
    props[key] = value;
  }
  return {
    message: error.message,
    name: error.name,
    stack: error.stack,
    props,
    hadQuery: 'query' in error,
  };
}
