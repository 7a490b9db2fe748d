import type { Hex } from 'viem';
import { requireChain } from '../chains/requireChain.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { getRequest } from '../../store/requests.repository.js';
import { followSameChainSwap, sameChainLegOf } from './sameChainSwap.js';
import type { DepositRecord } from '../../records/deposit.js';
import type { DepositWatcher } from '../ports/solver.js';

const bytes32 = /^0x[0-9a-fA-F]{64}$/;

export interface IndexTransactionParameters {
  chainId: number;
  txHash: string;
  /** The request the caller expects the transaction to deposit for (a hint; every deposit found is recorded). */
  requestId?: string | undefined;
}

export interface IndexTransactionReturnType {
  /** A human-readable summary for the wire `message`. */
  message: string;
  /** The deposits the transaction made (possibly none), in their current status. */
  deposits: DepositRecord[];
}

/**
 * Reads a transaction's receipt now and records every deposit in it, including deposits made inside another
 * contract's call (`POST /transactions/index`, GraphQL `Mutation.indexTransaction`). Confirmed deposits go to
 * the solver as if the watcher had found them.
 *
 * @throws `INVALID_INPUT` for a malformed hash or request id, `UNSUPPORTED_CHAIN` for a chain the gateway does
 *   not serve, `SERVICE_UNAVAILABLE` when no deposit watcher follows the chain, `NOT_FOUND` when the chain has
 *   no such transaction (yet), `RPC_HTTP_ERROR` / `REQUEST_TIMED_OUT` when the chain cannot be read.
 */
export async function indexTransaction(
  ctx: CoreContext,
  params: IndexTransactionParameters,
): Promise<IndexTransactionReturnType> {
  const txHash = requireBytes32(params.txHash, 'txHash');
  const requestId = params.requestId === undefined ? undefined : requireBytes32(params.requestId, 'requestId');
  const watcher = requireWatcher(ctx, params.chainId);
  const deposits = await watcher.indexTransaction(txHash);
  return { message: summarize(params.chainId, txHash, deposits, requestId), deposits };
}

export interface IndexSingleTransactionParameters {
  chainId: number;
  requestId: string;
  /** The transaction hash (GraphQL), or ... */
  txHash?: string | undefined;
  /** ... the JSON-encoded transaction the reference SDK sends (`{ from, to, data, value, chainId, ..., txHash }`). */
  tx?: string | undefined;
}

/**
 * Indexes a same-chain transaction of a request (`POST /transactions/single`, GraphQL
 * `Mutation.indexSingleTransaction`). A same-chain DEX swap (`quote.dex.sameChain`) is the user's own router
 * transaction: it is followed to its receipt, which decides the status (`followSameChainSwap`). Other same-chain
 * routes deposit through the depository like any other, so the transaction is indexed as `indexTransaction` does.
 *
 * @throws `INVALID_INPUT` when `tx` is not a JSON object with a 32-byte `txHash`, or names another chain; otherwise
 *   as `indexTransaction`.
 */
export async function indexSingleTransaction(
  ctx: CoreContext,
  params: IndexSingleTransactionParameters,
): Promise<IndexTransactionReturnType> {
  const txHash = params.tx !== undefined ? txHashOfEncodedTransaction(params.tx, params.chainId) : params.txHash;
  if (txHash === undefined)
    throw new GatewayError('INVALID_INPUT', 'Give the transaction hash (txHash) or the transaction (tx)');
  // A same-chain DEX swap is the user's own router transaction, with no deposit to index: its receipt decides.
  const request = bytes32.test(params.requestId) ? await getRequest(ctx.db, params.requestId) : undefined;
  const leg = request === undefined ? undefined : sameChainLegOf(request);
  if (request !== undefined && leg !== undefined && leg.chainId === params.chainId) {
    const message = await followSameChainSwap(ctx, request, leg, requireBytes32(txHash, 'txHash'));
    return { message, deposits: [] };
  }
  return indexTransaction(ctx, { chainId: params.chainId, txHash, requestId: params.requestId });
}

function requireWatcher(ctx: CoreContext, chainId: number): DepositWatcher {
  const chain = requireChain(ctx, chainId);
  const watchers = ctx.solving.running?.watchers;
  const watcher = watchers?.get(chainId);
  if (watcher === undefined) {
    throw new GatewayError(
      'SERVICE_UNAVAILABLE',
      watchers === undefined || watchers.size === 0
        ? 'This gateway does not index deposits (no deposit watchers are running)'
        : `Deposits on chain ${chainId} (${chain.displayName}) are not being indexed by this gateway`,
    );
  }
  return watcher;
}

function requireBytes32(value: string, field: string): Hex {
  if (!bytes32.test(value))
    throw new GatewayError(
      'INVALID_INPUT',
      `${field} must be 32 bytes of hex (0x and 64 hex digits), got ${JSON.stringify(value)}`,
      { data: field },
    );
  return value.toLowerCase() as Hex;
}

/** The `txHash` of the SDK's JSON-encoded transaction, checking its `chainId` when it has one. */
function txHashOfEncodedTransaction(encoded: string, chainId: number): string {
  let tx: unknown;
  try {
    tx = JSON.parse(encoded);
  } catch {
    throw new GatewayError('INVALID_INPUT', 'tx must be a JSON-encoded transaction object');
  }
  if (typeof tx !== 'object' || tx === null || Array.isArray(tx)) {
    throw new GatewayError('INVALID_INPUT', 'tx must be a JSON-encoded transaction object');
  }
  const { txHash, chainId: txChainId } = tx as { txHash?: unknown; chainId?: unknown };
  if (typeof txHash !== 'string') throw new GatewayError('INVALID_INPUT', 'tx has no txHash');
  if (txChainId !== undefined && txChainId !== null) {
    const parsed = parseChainId(txChainId);
    if (parsed !== chainId) {
      throw new GatewayError(
        'INVALID_INPUT',
        `tx.chainId (${JSON.stringify(txChainId)}) is not the chainId of the request body (${chainId})`,
      );
    }
  }
  return txHash;
}

/** A chain id as a number, a decimal string or a 0x string (wallets use all three); undefined when none. */
function parseChainId(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string' || !/^(0x[0-9a-fA-F]+|[0-9]+)$/.test(value)) return undefined;
  return Number(BigInt(value));
}

function summarize(chainId: number, txHash: string, deposits: DepositRecord[], requestId: string | undefined): string {
  if (deposits.length === 0) return `Transaction ${txHash} on chain ${chainId} indexed: no deposit found`;
  const statuses = deposits.map((deposit) => `${deposit.requestId} (${deposit.status})`).join(', ');
  const forRequest =
    requestId !== undefined && !deposits.some((deposit) => deposit.requestId === requestId)
      ? `; none of them is for request ${requestId}`
      : '';
  return `Transaction ${txHash} on chain ${chainId} indexed: ${deposits.length} deposit(s) for ${statuses}${forRequest}`;
}
