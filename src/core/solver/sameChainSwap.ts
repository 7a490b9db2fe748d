/**
 * The status of a same-chain DEX swap (`quote.dex.sameChain`): the user's own router transaction, which no deposit
 * announces. The gateway learns its hash from `POST /transactions/single` (the reference SDK posts it right after
 * sending) or finds it itself from the status poll (`discoverSameChainSwap`), then waits for its receipt:
 * - mined and successful: `success`, with the output the recipient actually received (the Transfer logs of the
 *   output token to the recipient; for native output, the WETH the router unwrapped for it);
 * - reverted (the pool moved past the minimum, the deadline passed): `failure` with `TRANSACTION_REVERTED`. The
 *   user's input never left their wallet, so there is nothing to refund.
 *
 * A transaction is the request's swap only when the user sent it to the quoted router with the request id at the
 * end of its calldata (`sameChainSwapCall`): the approval the SDK also posts, or anyone else's transaction, is left
 * alone.
 */
import { decodeAbiParameters, keccak256, toBytes, type Address, type Hex } from 'viem';
import type { ChainReceipt, ChainTransactions } from '../chains/chainTransactions.js';
import type { CoreContext } from '../context.js';
import { dexLegsOf, type DexLegRecord } from '../dex/legRecord.js';
import { GatewayError } from '../errors.js';
import { setStatus } from './setStatus.js';
import type { RequestRecord } from '../../records/request.js';

const TRANSFER = keccak256(toBytes('Transfer(address,address,uint256)'));
const WITHDRAWAL = keccak256(toBytes('Withdrawal(address,uint256)'));
/** How long the gateway waits for a posted swap to be mined before it leaves it to the status poll. */
const RECEIPT_WAIT_MS = 120_000;

/** The request's same-chain DEX leg, if it is such a request. */
export function sameChainLegOf(request: RequestRecord): DexLegRecord | undefined {
  return dexLegsOf(request.quote).sameChain;
}

/** Hashes being followed, per context: a repeated post or poll does not start a second wait. */
const following = new WeakMap<CoreContext, Map<string, Promise<void>>>();

/**
 * Follows `txHash` as the swap of `request` (a same-chain DEX request): answers at once with what was found, and
 * moves the status when the receipt is in (now, or in the background for a transaction still pending).
 *
 * @throws `SERVICE_UNAVAILABLE` without a transaction reader; `NOT_FOUND` when the chain does not know the hash.
 */
export async function followSameChainSwap(
  ctx: CoreContext,
  request: RequestRecord,
  leg: DexLegRecord,
  txHash: Hex,
): Promise<string> {
  const reader = ctx.transactions;
  if (reader === undefined) throw new GatewayError('SERVICE_UNAVAILABLE', 'This gateway does not read transactions');
  if (request.status !== 'waiting') return `Request ${request.id} is already ${request.status}`;
  const tx = await reader.transaction(leg.chainId, txHash);
  if (tx === null)
    throw new GatewayError('NOT_FOUND', `Transaction ${txHash} is not known on chain ${leg.chainId} (yet)`);
  if (!isSwapOf(request, leg, tx)) return `Transaction ${txHash} is not the swap of request ${request.id}: left alone`;
  let started = following.get(ctx);
  if (started === undefined) following.set(ctx, (started = new Map<string, Promise<void>>()));
  const key = `${request.id}:${txHash.toLowerCase()}`;
  if (!started.has(key)) {
    const done = settleWhenMined(ctx, reader, request, leg, txHash)
      .catch((error: unknown) => ctx.log.warn({ err: error, requestId: request.id, txHash }, 'same-chain swap'))
      .finally(() => started.delete(key));
    started.set(key, done);
    // A transaction already mined settles before the answer, so a poll right after it sees the outcome.
    if (tx.blockNumber !== null) await done;
  }
  return `Transaction ${txHash} on chain ${leg.chainId} is the swap of request ${request.id}: followed`;
}

function isSwapOf(
  request: RequestRecord,
  leg: DexLegRecord,
  tx: { from: Address; to: Address | null; input: Hex },
): boolean {
  return (
    tx.from.toLowerCase() === request.user.toLowerCase() &&
    tx.to?.toLowerCase() === leg.router.toLowerCase() &&
    tx.input.toLowerCase().endsWith(request.id.slice(2).toLowerCase())
  );
}

async function settleWhenMined(
  ctx: CoreContext,
  reader: ChainTransactions,
  request: RequestRecord,
  leg: DexLegRecord,
  txHash: Hex,
): Promise<void> {
  const receipt = await reader.waitForReceipt(leg.chainId, txHash, RECEIPT_WAIT_MS);
  if (receipt === null) return;
  await settle(ctx, request, leg, txHash, receipt);
}

/** Moves the request to its outcome by the swap's receipt. */
async function settle(
  ctx: CoreContext,
  request: RequestRecord,
  leg: DexLegRecord,
  txHash: Hex,
  receipt: ChainReceipt,
): Promise<void> {
  if (receipt.status === 'reverted') {
    await setStatus(ctx, request, 'swapFail', { failReason: 'TRANSACTION_REVERTED', inTxHash: txHash });
    return;
  }
  const received = receivedBy(request.recipient as Address, leg, receipt);
  if (received < BigInt(leg.minAmountOut)) {
    // The routers enforce the minimum, so this means the receipt does not show the payment as quoted.
    ctx.log.warn({ requestId: request.id, txHash, received: received.toString() }, 'same-chain swap paid too little');
    await setStatus(ctx, request, 'swapFail', { failReason: 'EXECUTION_REVERTED', inTxHash: txHash });
    return;
  }
  await setStatus(ctx, request, 'swapSucceed', {
    inTxHash: txHash,
    txHash,
    details: { received: received.toString() },
  });
}

/**
 * What the recipient received in the swap: the output token's Transfer logs to it, or for native output the
 * WETH the router unwrapped (the router pays all of it to the recipient in the same call).
 */
export function receivedBy(recipient: Address, leg: DexLegRecord, receipt: ChainReceipt): bigint {
  let total = 0n;
  const tokenOut = leg.tokenOut.toLowerCase();
  for (const log of receipt.logs) {
    if (log.address.toLowerCase() !== tokenOut) continue;
    const [topic0, topic1, topic2] = log.topics;
    if (leg.nativeOut) {
      if (topic0 === WITHDRAWAL && topic1 !== undefined && sameAddress(topic1, leg.router))
        total += decodeAbiParameters([{ type: 'uint256' }], log.data)[0];
    } else if (topic0 === TRANSFER && topic2 !== undefined && sameAddress(topic2, recipient)) {
      total += decodeAbiParameters([{ type: 'uint256' }], log.data)[0];
    }
  }
  return total;
}

const sameAddress = (topic: Hex, address: Address): boolean =>
  topic.toLowerCase().endsWith(address.slice(2).toLowerCase());

/**
 * Finds the swap of a waiting same-chain DEX request that nobody posted (a client that only polls the status):
 * the output's Transfer logs to the recipient (or WETH's Withdrawal logs of the router, for native output) since
 * the quote's block, whose transaction is the request's swap. At most one search per request at a time.
 */
export async function discoverSameChainSwap(
  ctx: CoreContext,
  request: RequestRecord,
  leg: DexLegRecord,
): Promise<void> {
  const reader = ctx.transactions;
  if (reader === undefined || request.status !== 'waiting') return;
  const topics: Array<Hex | null> = leg.nativeOut
    ? [WITHDRAWAL, padAddress(leg.router)]
    : [TRANSFER, null, padAddress(request.recipient as Address)];
  const logs = await reader.logs(leg.chainId, { address: leg.tokenOut, topics, fromBlock: BigInt(leg.blockNumber) });
  const hashes = [...new Set(logs.map((log) => log.transactionHash.toLowerCase() as Hex))];
  for (const hash of hashes) {
    const tx = await reader.transaction(leg.chainId, hash);
    if (tx !== null && isSwapOf(request, leg, tx)) {
      await followSameChainSwap(ctx, request, leg, hash);
      return;
    }
  }
}

const padAddress = (address: Address): Hex => `0x${address.slice(2).toLowerCase().padStart(64, '0')}`;
