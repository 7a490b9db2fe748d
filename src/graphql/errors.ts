import { GraphQLError } from 'graphql';
import type { Logger } from '../core/logger.js';
import { isGatewayError } from '../core/errors.js';

/** Message of every masked error (yoga's default wording). */
const unexpectedErrorMessage = 'Unexpected error.';

/**
 * The one place GraphQL maps failures, for HTTP and graphql-ws alike:
 * - a `GatewayError` (possibly wrapped by graphql-js) becomes a GraphQLError with its message and
 *   `extensions: { code, status, retriable, errorData? }`: `code` is the REST `errorCode`, `status` the HTTP
 *   status REST would answer. The HTTP status of a GraphQL response stays 200: one failed field must not fail
 *   its siblings, and yoga would turn an `extensions.http.status` into the status of the whole response;
 * - a GraphQLError raised on purpose (validation, scalar parsing) passes through with its code; one without a code
 *   (graphql-js refusing a variable of a built-in scalar) gets REST's `INVALID_INPUT` and status 400;
 * - anything else is logged to `log` (when given; yoga logs what its own masking replaces) and masked as
 *   `Unexpected error.` with code `UNKNOWN_ERROR`.
 * Location and path of the incoming error are kept.
 */
export function toGraphQLError(error: unknown, log?: Logger): GraphQLError {
  const cause = rootCause(error);
  const located = error instanceof GraphQLError ? error : undefined;
  const location = {
    nodes: located?.nodes,
    source: located?.source,
    positions: located?.positions,
    path: located?.path,
  };
  if (isGatewayError(cause)) {
    return new GraphQLError(cause.message, {
      ...location,
      extensions: {
        code: cause.code,
        status: cause.status,
        retriable: cause.retriable,
        ...(cause.data === undefined ? {} : { errorData: cause.data }),
      },
    });
  }
  if (cause instanceof GraphQLError) {
    const deliberate = located ?? cause;
    if (deliberate.extensions.code !== undefined) return deliberate;
    // A value graphql-js itself refuses (an `Int` beyond 32 bits, a float for an `Int`): bad input, as REST says.
    return new GraphQLError(deliberate.message, {
      nodes: deliberate.nodes,
      source: deliberate.source,
      positions: deliberate.positions,
      path: deliberate.path,
      originalError: deliberate.originalError,
      extensions: { ...deliberate.extensions, code: 'INVALID_INPUT', status: 400 },
    });
  }
  log?.error({ err: cause, path: located?.path?.join('.') }, 'unexpected error in a GraphQL operation');
  return new GraphQLError(unexpectedErrorMessage, { ...location, extensions: { code: 'UNKNOWN_ERROR' } });
}

/** The innermost error: graphql-js wraps what a resolver throws in `GraphQLError.originalError`. */
function rootCause(error: unknown): unknown {
  let current = error;
  while (current instanceof GraphQLError && current.originalError != null) current = current.originalError;
  return current;
}
