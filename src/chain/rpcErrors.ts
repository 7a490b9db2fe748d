import { BaseError, HttpRequestError, InternalRpcError, RpcError, RpcRequestError, TimeoutError } from 'viem';
import type { ChainConfig } from '../core/chains/types.js';
import { GatewayError } from '../core/errors.js';

/**
 * How `src/chain` tells RPC failures apart, in one place. Three questions are asked of a failed call:
 *
 * - did the node answer at all (`noAnswer`: a timeout, a refused connection, an HTTP error)? Reads turn that into
 *   `REQUEST_TIMED_OUT` / `RPC_HTTP_ERROR` (`rpcGatewayError`); a call that did get an answer and failed reverted
 *   (`isRevert`);
 * - may a write have reached the node even though it failed (`mayHaveReachedNode`)? The sender then treats the
 *   transaction as possibly broadcast, never as certainly not sent;
 * - how is the chain named in a message (`describeChain`).
 */

/** A chain as messages name it: `Devnet A (chain 31337)`. */
export const describeChain = (chain: ChainConfig): string => `${chain.displayName} (chain ${chain.id})`;

/** The call got no JSON-RPC answer: it timed out, or the HTTP request itself failed. */
export function noAnswer(error: unknown): boolean {
  return (
    error instanceof BaseError && error.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError) !== null
  );
}

/** A call the node executed and that reverted (or hit no code), as opposed to a transport failure. */
export function isRevert(error: unknown): boolean {
  return error instanceof BaseError && !noAnswer(error);
}

/**
 * Whether a failed write may have reached the node: no JSON-RPC answer at all (timeout, refused connection, HTTP
 * error), or an internal / unknown error, which a proxy can return after forwarding the call.
 */
export function mayHaveReachedNode(error: unknown): boolean {
  if (!(error instanceof BaseError)) return true;
  const answer = error.walk((e) => e instanceof RpcRequestError || e instanceof RpcError) as
    RpcRequestError | RpcError | null;
  if (answer === null) return true;
  return answer.code === InternalRpcError.code || answer.code === -1; /* viem's UnknownRpcError */
}

/**
 * The node did not answer: `REQUEST_TIMED_OUT` for a timeout, `RPC_HTTP_ERROR` with the HTTP status (or the
 * network error) otherwise; undefined when it did answer. `doing` completes "while …". A `GatewayError` passes.
 */
export function transportFailure(error: unknown, chain: ChainConfig, doing: string): GatewayError | undefined {
  if (error instanceof GatewayError) return error;
  if (!(error instanceof BaseError)) return undefined;
  if (error.walk((e) => e instanceof TimeoutError)) {
    return new GatewayError('REQUEST_TIMED_OUT', `RPC of ${describeChain(chain)} timed out while ${doing}`, {
      cause: error,
    });
  }
  const http = error.walk((e) => e instanceof HttpRequestError);
  if (http instanceof HttpRequestError) {
    const detail = http.status === undefined ? http.details || http.shortMessage : `HTTP ${http.status}`;
    return new GatewayError('RPC_HTTP_ERROR', `RPC of ${describeChain(chain)} failed while ${doing}: ${detail}`, {
      cause: error,
    });
  }
  return undefined;
}

/** The node answered with an error, or with something that is not the expected answer: `RPC_HTTP_ERROR`. */
export function rpcFailure(error: unknown, chain: ChainConfig, doing: string): GatewayError {
  const detail = error instanceof BaseError ? error.shortMessage : String(error);
  return new GatewayError('RPC_HTTP_ERROR', `RPC of ${describeChain(chain)} failed while ${doing}: ${detail}`, {
    cause: error,
  });
}

/** Any failed read as the gateway's error: `transportFailure`, else `rpcFailure`. */
export function rpcGatewayError(error: unknown, chain: ChainConfig, doing: string): GatewayError {
  return transportFailure(error, chain, doing) ?? rpcFailure(error, chain, doing);
}
