import type { Address, Hex } from 'viem';
import { requireChain } from '../chains/requireChain.js';
import type { CoreContext } from '../context.js';
import { fillPayee, type FillTransactionParameters } from '../fill/fillTransaction.js';
import { quotedRequestOf, type FillFacts } from '../ledger/movements.js';
import { fillOutflow, gasTopupOf } from '../fill/fillOutflow.js';
import { callsOf } from './requestCalls.js';
import { dexSwapOf } from './dexFill.js';
import type { RequestRecord } from '../../records/request.js';

/**
 * The fill of a request, as the solver's fill contract makes it: the output to the recipient (or, with calls, to
 * the public multicaller), the user's calls and the gas top-up. The transaction (`fillOf`) and what the ledger books
 * of it (`fillFactsOf`) are both read from it, so they cannot disagree.
 */
export function fillParametersOf(ctx: CoreContext, request: RequestRecord): FillTransactionParameters {
  const destination = requireChain(ctx, request.destinationChainId);
  return {
    requestId: request.id as Hex,
    contracts: destination.contracts,
    solver: ctx.solver.address,
    recipient: request.recipient as Address,
    currency: request.destinationCurrency as Address,
    amount: request.amountOut,
    calls: callsOf(request),
    gasTopup: gasTopupOf(request),
    dexSwap: dexSwapOf(request),
  };
}

/**
 * What a request's fill pays, for the ledger: the output (or, bought through the pools, the entry currency the
 * swap spends), from the solver's wallet on the destination, to the recipient or the multicaller; the top-up
 * beside it.
 */
export function fillFactsOf(ctx: CoreContext, request: RequestRecord): FillFacts {
  const fill = fillParametersOf(ctx, request);
  const outflow = fillOutflow(request);
  return {
    request: quotedRequestOf(request),
    paid: {
      chainId: request.destinationChainId,
      currency: outflow.currency.toLowerCase(),
      amount: outflow.amount,
      to: fillPayee(fill.contracts, fill.recipient, fill.calls).toLowerCase(),
    },
    gasTopup: fill.gasTopup ?? 0n,
  };
}
