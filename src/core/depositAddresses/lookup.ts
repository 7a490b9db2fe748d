import { getAddress, zeroAddress, type Address } from 'viem';
import {
  claimReindex,
  depositAddressesOfRequests,
  findDepositAddress,
  getDepositAddress,
} from '../../store/depositAddresses.repository.js';
import type { StatusDepositAddress } from '../../store/requests.repository.js';
import { chainCurrencies, requireChain } from '../chains/requireChain.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';

/** Seconds between two reindexes of one address (the reference answers 429 inside its cooldown). */
export const REINDEX_COOLDOWN_MS = 60_000;

export interface DepositAddressLookup {
  depositAddress: string;
  type: 'open' | 'strict';
  requestId: string;
  chainId: number;
  createdAt: string;
  currency: string | null;
  refundTo: string | null;
}

/** The deposit address of a request as a status record carries it (GraphQL `RequestStatusRecord`); null when none. */
export async function statusDepositAddressOf(
  ctx: CoreContext,
  requestId: string,
): Promise<StatusDepositAddress | null> {
  const stored = (await depositAddressesOfRequests(ctx.db, [requestId])).get(requestId.toLowerCase());
  if (stored === undefined) return null;
  return {
    address: stored.address,
    type: stored.type,
    depositor: stored.depositor,
    depositTxHash: stored.depositTxHash,
    recoveryAddress: stored.recoveryAddress,
  };
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
  };
}

/**
 * `POST /transactions/deposit-address/reindex`: reads the balance of every listed currency (or `currency`) at the
 * address and has the chain's deposit-address watcher read the chain at once. 404 for an unknown address, 429
 * inside the cooldown, 503 without a running watcher.
 */
export async function reindexDepositAddress(
  ctx: CoreContext,
  body: { chainId: number; depositAddress: string; targetChainId?: number | undefined; currency?: string | undefined },
) {
  const chain = requireChain(ctx, body.chainId);
  if (body.targetChainId !== undefined && body.targetChainId !== body.chainId)
    throw new GatewayError(
      'INVALID_INPUT',
      `Funds on another chain (${body.targetChainId}) are not swept by this gateway; reindex on chain ${body.chainId}`,
      { data: 'targetChainId' },
    );
  const address = await getDepositAddress(ctx.db, body.chainId, body.depositAddress);
  if (address === undefined)
    throw new GatewayError('NOT_FOUND', `No deposit address ${body.depositAddress} on chain ${body.chainId}`);
  const watcher = ctx.depositAddressWatchers?.get(chain.id);
  if (watcher === undefined)
    throw new GatewayError('SERVICE_UNAVAILABLE', 'The deposit-address watcher is not running on this instance');
  if (!(await claimReindex(ctx.db, chain.id, address.address, ctx.now(), REINDEX_COOLDOWN_MS)))
    throw new GatewayError('RATE_LIMITED', `Deposit address reindexed less than ${REINDEX_COOLDOWN_MS / 1000} s ago`);
  const currencies = chainCurrencies(chain).filter(
    (currency) => body.currency === undefined || currency.address.toLowerCase() === body.currency.toLowerCase(),
  );
  let failed = 0;
  const triggered: Array<{ currency: string; symbol: string; balance: bigint }> = [];
  for (const currency of currencies) {
    try {
      const balance = await ctx.market.balanceOf(chain.id, address.address as Address, currency.address);
      if (balance > 0n) triggered.push({ currency: currency.address, symbol: currency.symbol, balance });
    } catch {
      failed++;
    }
  }
  await watcher.pollNow();
  return {
    message: 'Deposit address reindexed',
    triggeredCurrencies: triggered,
    checkedCurrencies: currencies.length,
    failedCurrencies: failed,
  };
}
