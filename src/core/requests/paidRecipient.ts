import type { Address } from 'viem';
import type { RequestRecord } from '../../records/request.js';

/**
 * Whom a request's fill pays on the destination: the recipient of a plain payment; for a request
 * with calls, the payee of its stored order (the multicaller that runs the calls, as the quote's
 * `details.recipient` said), in lower case as the store keeps addresses. The attestations sign this address as `destinationUser`, so a contract checking
 * one sees the address the fill transaction actually paid.
 */
export function paidRecipientOf(request: Pick<RequestRecord, 'recipient' | 'quote'>): Address {
  const calls = request.quote.calls;
  if (Array.isArray(calls) && calls.length > 0) {
    const payee = orderPayee(request.quote.order);
    if (payee !== undefined) return payee;
  }
  return request.recipient as Address;
}

/** The first output payment's recipient of a stored protocol order, if it has one. */
function orderPayee(order: unknown): Address | undefined {
  if (typeof order !== 'object' || order === null) return undefined;
  const payments = (order as { orderData?: { output?: { payments?: unknown } } }).orderData?.output?.payments;
  if (!Array.isArray(payments)) return undefined;
  const recipient: unknown = (payments[0] as { recipient?: unknown } | undefined)?.recipient;
  return typeof recipient === 'string' && /^0x[0-9a-fA-F]{40}$/.test(recipient)
    ? (recipient.toLowerCase() as Address)
    : undefined;
}
