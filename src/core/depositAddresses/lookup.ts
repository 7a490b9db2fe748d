import { getAddress, zeroAddress, type Address, type Hex } from 'viem';
import {
  claimReindex,
  depositAddressesOfRequests,
  findDepositAddress,
  getDepositAddress,
  insertDepositAddress,
  listTransfers,
} from '../../store/depositAddresses.repository.js';
import { toStatusDepositAddress, type StatusDepositAddress } from '../../records/requestStatus.js';
import { chainCurrencies, requireChain } from '../chains/requireChain.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { computeDepositAddress } from '../vocabulary/depositAddress.js';

/** The most dust transfers one lookup lists (`unsweptTransfers`). */
const MAX_UNSWEPT_SHOWN = 100;

/** Seconds between two reindexes of one address (the reference answers 429 inside its cooldown). */
export const REINDEX_COOLDOWN_MS = 60_000;
/** Blocks a reindex rescans when the configuration does not say (`GATEWAY_DEPOSIT_ADDRESS_REINDEX_BLOCKS`). */
const DEFAULT_REINDEX_BLOCKS = 1_000;

export interface DepositAddressLookup {
  depositAddress: string;
  type: 'open' | 'strict';
  requestId: string;
  chainId: number;
  createdAt: string;
  currency: string | null;
  refundTo: string | null;
  /** Transfers left at the address as dust (worth less than their sweep), oldest first. */
  unsweptTransfers: Array<{ txHash: string; currency: string; amount: string; depositor: string; status: 'dust' }>;
}

/** The deposit address of a request as a status record carries it (GraphQL `RequestStatusRecord`); null when none. */
export async function statusDepositAddressOf(
  ctx: CoreContext,
  requestId: string,
): Promise<StatusDepositAddress | null> {
  const stored = (await depositAddressesOfRequests(ctx.db, [requestId])).get(requestId.toLowerCase());
  return stored === undefined ? null : toStatusDepositAddress(stored);
}

/** `GET /deposit-addresses/v1`: by `address` or by `requestId`. */
export async function lookupDepositAddress(
  ctx: CoreContext,
  query: { address?: string | undefined; requestId?: string | undefined },
): Promise<DepositAddressLookup> {
  if ((query.address === undefined) === (query.requestId === undefined))
    throw new GatewayError('INVALID_INPUT', 'Give exactly one of address and requestId');
  const found = await findDepositAddress(
    ctx.db,
    query.address !== undefined ? { address: query.address } : { requestId: query.requestId! },
  );
  if (found === undefined) throw new GatewayError('NOT_FOUND', 'No deposit address matches');
  return {
    depositAddress: getAddress(found.address),
    type: found.type,
    requestId: found.requestId,
    chainId: found.chainId,
    createdAt: new Date(found.createdAt).toISOString(),
    currency: found.currency,
    refundTo: found.refundTo === null || found.refundTo === zeroAddress ? null : found.refundTo,
    unsweptTransfers: (
      await listTransfers(ctx.db, {
        chainId: found.chainId,
        address: found.address,
        status: ['dust'],
        // Anyone can send dust to an address: the lookup shows the oldest, never an unbounded list.
        limit: MAX_UNSWEPT_SHOWN,
      })
    ).map((transfer) => ({
      txHash: transfer.txHash,
      currency: transfer.token,
      amount: transfer.amount.toString(),
      depositor: transfer.depositor,
      status: 'dust' as const,
    })),
  };
}

/**
 * `POST /transactions/deposit-address/reindex`: rescans the last `depositAddressReindexBlocks` blocks of the
 * address's chain (or `targetChainId`, for funds sent on the wrong chain) for transfers the watcher missed, records
 * them (the usual confirmation, sweep and fill or refund follow) and answers the balance of every listed currency
 * (or `currency`) there. 404 for an unknown address, 429 inside the cooldown, 503 without a running watcher.
 *
 * With `targetChainId`, the address must be this gateway's on that chain too (its factory there computes the same
 * address: the same factory address); it is then registered there with its terms, so the target chain's watcher
 * follows it from now on. A transfer found there is handled as one to the address: strict, it is not the quoted
 * chain, so it is refunded to `refundTo`; open, it is re-quoted from that chain.
 */
export async function reindexDepositAddress(
  ctx: CoreContext,
  body: { chainId: number; depositAddress: string; targetChainId?: number | undefined; currency?: string | undefined },
) {
  requireChain(ctx, body.chainId);
  const address = await getDepositAddress(ctx.db, body.chainId, body.depositAddress);
  if (address === undefined)
    throw new GatewayError('NOT_FOUND', `No deposit address ${body.depositAddress} on chain ${body.chainId}`);
  const target = ctx.config.chains.find((chain) => chain.id === (body.targetChainId ?? body.chainId));
  if (target === undefined)
    throw new GatewayError('UNSUPPORTED_CHAIN', `Chain ${body.targetChainId} is not supported by this gateway`, {
      data: 'targetChainId',
    });
  const factory = target.contracts.depositAddressFactory;
  if (
    target.id !== body.chainId &&
    (factory === undefined ||
      computeDepositAddress(
        factory,
        address.saltKey as Hex,
        address.recoveryAddress as Address | null,
      ).toLowerCase() !== address.address)
  )
    throw new GatewayError(
      'INVALID_INPUT',
      `${body.depositAddress} is not a deposit address of this gateway on chain ${target.id}: funds there cannot be swept`,
      { data: 'targetChainId' },
    );
  const watcher = ctx.solving.running?.depositAddressWatchers.get(target.id);
  if (watcher === undefined)
    throw new GatewayError('SERVICE_UNAVAILABLE', 'The deposit-address watcher is not running on this instance');
  // One rescan at a time per chain: reindexing many addresses at once cannot pile up RPC work.
  if (watcher.rescanning())
    throw new GatewayError('RATE_LIMITED', `A deposit-address reindex is running on chain ${target.id}; retry shortly`);
  if (!(await claimReindex(ctx.db, body.chainId, address.address, ctx.now(), REINDEX_COOLDOWN_MS)))
    throw new GatewayError('RATE_LIMITED', `Deposit address reindexed less than ${REINDEX_COOLDOWN_MS / 1000} s ago`);
  if (target.id !== body.chainId) {
    const { reindexedAt: _own, ...terms } = address;
    await insertDepositAddress(ctx.db, { ...terms, chainId: target.id, createdAt: ctx.now() });
  }
  const currencies = chainCurrencies(target).filter(
    (currency) => body.currency === undefined || currency.address.toLowerCase() === body.currency.toLowerCase(),
  );
  let failed = 0;
  const triggered: Array<{ currency: string; symbol: string; balance: bigint }> = [];
  for (const currency of currencies) {
    try {
      const balance = await ctx.market.balanceOf(target.id, address.address as Address, currency.address);
      if (balance > 0n) triggered.push({ currency: currency.address, symbol: currency.symbol, balance });
    } catch {
      failed++;
    }
  }
  await watcher.rescan(address.address, BigInt(ctx.config.depositAddressReindexBlocks ?? DEFAULT_REINDEX_BLOCKS));
  return {
    message: 'Deposit address reindexed',
    triggeredCurrencies: triggered,
    checkedCurrencies: currencies.length,
    failedCurrencies: failed,
  };
}
