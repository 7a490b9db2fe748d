import type { Address, Hex } from 'viem';
import { insertDepositAddress } from '../../store/depositAddresses.repository.js';
import type { JsonObject } from '../../records/json.js';
import type { CoreContext } from '../context.js';
import type { ResolvedRoute } from '../vocabulary/route.js';
import type { QuoteParameters } from './types.js';
import { computeDepositAddress, openAddressKey, type OpenAddressTerms } from '../vocabulary/depositAddress.js';

export interface QuotedDepositAddress {
  address: Address;
  type: 'strict' | 'open';
  key: Hex;
  recoveryAddress: Address | null;
  /** The zero address: refund the detected depositor. */
  refundTo: Address;
  terms: OpenAddressTerms;
}

/**
 * The deposit address of a `useDepositAddress` quote, or null for a regular quote. Strict: keyed by the request
 * id (single use, bound to the order). Open: keyed by the route and parties (`openAddressKey`), so the same route
 * for the same recipient and refund address gets the same, reusable address.
 */
export function depositAddressOfQuote(
  route: ResolvedRoute,
  params: QuoteParameters,
  requestId: Hex,
): QuotedDepositAddress | null {
  const options = route.depositAddress;
  if (options === null || options === undefined) return null;
  const factory = route.origin.contracts.depositAddressFactory!;
  const terms: OpenAddressTerms = {
    originChainId: route.origin.id,
    originCurrency: route.currencyIn.address,
    destinationChainId: route.destination.id,
    destinationCurrency: route.currencyOut.address,
    recipient: route.recipient,
    refundTo: params.refundTo === undefined ? null : route.refundTo,
    slippageTolerance: params.slippageTolerance ?? null,
    referrer: params.referrer ?? null,
    appFees: (params.appFees ?? []).map((fee) => ({ recipient: fee.recipient!, fee: fee.fee! })),
  };
  const key = options.type === 'strict' ? requestId : openAddressKey(terms);
  return {
    address: computeDepositAddress(factory, key, options.recoveryAddress),
    type: options.type,
    key,
    recoveryAddress: options.recoveryAddress,
    refundTo: route.refundTo,
    terms,
  };
}

/** Records the address (an open one once: its first quote's terms are the ones its transfers are re-quoted at). */
export async function recordDepositAddress(
  ctx: CoreContext,
  quoted: QuotedDepositAddress,
  quote: { route: ResolvedRoute; params: QuoteParameters; requestId: Hex; amountIn: bigint },
): Promise<void> {
  const params: JsonObject = {
    ...(quoted.terms as unknown as JsonObject),
    user: quote.route.user,
    tradeType: quote.params.tradeType,
    amountIn: quote.amountIn.toString(),
  };
  await insertDepositAddress(ctx.db, {
    chainId: quote.route.origin.id,
    address: quoted.address,
    type: quoted.type,
    saltKey: quoted.key,
    recoveryAddress: quoted.recoveryAddress,
    requestId: quote.requestId,
    currency: quote.route.currencyIn.address,
    refundTo: quoted.terms.refundTo === null ? null : quoted.refundTo,
    params,
    createdAt: ctx.now(),
  });
}
