/**
 * Every failure a client can cause, or a retry can cure, is a `GatewayError` with a stable `code`.
 * The codes are the reference service's `errorCode` values; transports map `status` and the body
 * `{ message, errorCode, errorData? }` in exactly one place each (REST error handler, GraphQL error mapper).
 */
export type ErrorCode =
  // request shape
  | 'INVALID_INPUT'
  | 'NOT_FOUND'
  | 'NOT_IMPLEMENTED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'METHOD_NOT_ALLOWED'
  // auth and limits
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'CONFLICT'
  | 'RATE_LIMITED'
  // quote and routing
  | 'AMOUNT_TOO_LOW'
  | 'AMOUNT_TOO_HIGH'
  | 'INVALID_ADDRESS'
  | 'INVALID_RECIPIENT'
  | 'USER_RECIPIENT_MISMATCH'
  | 'INVALID_INPUT_CURRENCY'
  | 'INVALID_OUTPUT_CURRENCY'
  | 'UNSUPPORTED_CHAIN'
  | 'CHAIN_DISABLED'
  | 'UNSUPPORTED_CURRENCY'
  | 'UNSUPPORTED_ROUTE'
  | 'NO_SWAP_ROUTES_FOUND'
  | 'INSUFFICIENT_LIQUIDITY'
  | 'INVALID_SLIPPAGE_TOLERANCE'
  | 'INVALID_EXTRA_TXS'
  | 'EXTRA_TXS_NOT_SUPPORTED'
  | 'SWAP_IMPACT_TOO_HIGH'
  | 'ROUTE_TEMPORARILY_RESTRICTED'
  | 'DESTINATION_TX_FAILED'
  | 'NO_QUOTES'
  | 'UNSUPPORTED_EXECUTION_TYPE'
  | 'INVALID_GAS_LIMIT_FOR_DEPOSIT_SPECIFIED_TXS'
  // signatures and balances (permits, app-fee claims)
  | 'PERMIT_FAILED'
  | 'INSUFFICIENT_FUNDS'
  // gasless execution: the user's batch reverts in simulation (the decoded revert in the body's `details`)
  | 'SIMULATION_FAILED'
  // a sponsored quote or gasless batch costs more than the API key's remaining sponsorship allowance
  | 'SPONSOR_BALANCE_TOO_LOW'
  // transient
  | 'PRICE_FETCH_FAILED'
  | 'SERVICE_UNAVAILABLE'
  | 'REQUEST_TIMED_OUT'
  | 'RPC_HTTP_ERROR'
  // unexpected
  | 'UNKNOWN_ERROR';

/** HTTP status of each code; codes not listed are 400. */
const statusOf: Partial<Record<ErrorCode, number>> = {
  NOT_FOUND: 404,
  NOT_IMPLEMENTED: 501,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  METHOD_NOT_ALLOWED: 405,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  CONFLICT: 409,
  RATE_LIMITED: 429,
  PRICE_FETCH_FAILED: 503,
  SERVICE_UNAVAILABLE: 503,
  REQUEST_TIMED_OUT: 504,
  RPC_HTTP_ERROR: 502,
  UNKNOWN_ERROR: 500,
};

/** Codes a client may retry unchanged and expect to succeed later. */
const retriableCodes = new Set<ErrorCode>([
  'RATE_LIMITED',
  'PRICE_FETCH_FAILED',
  'SERVICE_UNAVAILABLE',
  'REQUEST_TIMED_OUT',
  'RPC_HTTP_ERROR',
  // An exposure window that is full now has room again once older fills leave it.
  'ROUTE_TEMPORARILY_RESTRICTED',
]);

export interface GatewayErrorOptions {
  /** Extra machine-readable context, sent as `errorData` (a string on the wire). */
  data?: string;
  cause?: unknown;
  /** Extra fields of the error body in the reference's shape (a gasless simulation's `error` and `details`). */
  body?: Record<string, unknown>;
}

export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly retriable: boolean;
  readonly data: string | undefined;
  readonly body: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = statusOf[code] ?? 400;
    this.retriable = retriableCodes.has(code);
    this.data = options.data;
    this.body = options.body;
  }
}

export const isGatewayError = (error: unknown): error is GatewayError => error instanceof GatewayError;

/** The error for an operation declared in the contract whose implementation has not landed yet. */
export const notImplemented = (operationId: string): GatewayError =>
  new GatewayError('NOT_IMPLEMENTED', `Operation ${operationId} is declared but not implemented yet`);

/** An error's message for a log line that does not need its stack (`String(error)` for a non-Error). */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
