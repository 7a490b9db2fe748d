import type { QueryResolvers, QuoteInput, Resolvers } from '../../../generated/graphql/resolvers.js';
import { getPrice, getQuote } from '../../core/quote/getQuote.js';
import type { QuoteParameters } from '../../core/quote/types.js';
import { checkQuoteInputLimits } from '../quoteInputLimits.js';

/** The core's quote parameters from the GraphQL input (the same fields as the REST body, typed). */
function toQuoteParameters(input: QuoteInput): QuoteParameters {
  checkQuoteInputLimits(input);
  return {
    user: input.user,
    recipient: input.recipient ?? undefined,
    originChainId: input.originChainId,
    destinationChainId: input.destinationChainId,
    originCurrency: input.originCurrency,
    destinationCurrency: input.destinationCurrency,
    amount: input.amount,
    tradeType: input.tradeType,
    txs: input.txs?.map((tx) => ({ to: tx.to, value: tx.value, data: tx.data })),
    refundTo: input.refundTo ?? undefined,
    referrer: input.referrer ?? undefined,
    useExternalLiquidity: input.useExternalLiquidity ?? undefined,
    explicitDeposit: input.explicitDeposit ?? undefined,
    slippageTolerance: input.slippageTolerance == null ? undefined : String(input.slippageTolerance),
    appFees: input.appFees?.map((fee) => ({ recipient: fee.recipient, fee: String(fee.fee) })),
    subsidizeFees: input.subsidizeFees ?? undefined,
    sponsoredFeeComponents: input.sponsoredFeeComponents ?? undefined,
    maxSubsidizationAmount: input.maxSubsidizationAmount ?? undefined,
    includeProtocolData: input.includeProtocolData ?? undefined,
    ttl: input.ttl ?? undefined,
    usePermit: input.usePermit ?? undefined,
    permitExpiry: input.permitExpiry ?? undefined,
    useDepositAddress: input.useDepositAddress ?? undefined,
    strict: input.strict ?? undefined,
    recoveryAddress: input.recoveryAddress ?? undefined,
    topupGas: input.topupGas ?? undefined,
    topupGasAmount: input.topupGasAmount == null ? undefined : String(input.topupGasAmount),
    includedSwapSources: input.includedSwapSources ?? undefined,
    excludedSwapSources: input.excludedSwapSources ?? undefined,
    includedDestinationSwapSources: input.includedDestinationSwapSources ?? undefined,
    overridePriceImpact: input.overridePriceImpact ?? undefined,
  };
}

/** `Query.quote` (operation `getQuote`). */
export const quote: QueryResolvers['quote'] = async (_parent, { input }, { core, caller }) =>
  getQuote(core, toQuoteParameters(input), await caller());

/** `Query.price` (operation `getPrice`). */
export const price: QueryResolvers['price'] = async (_parent, { input }, { core, caller }) =>
  getPrice(core, toQuoteParameters(input), await caller());

/** Field resolvers where the GraphQL shape differs from the core's. */
export const quoteTypeResolvers: Pick<Resolvers, 'OrderData' | 'OrderPayment'> = {
  // Free-form JSON objects: amounts as decimal strings, like the REST body.
  OrderData: {
    fees: (order) => order.fees.map((fee) => ({ ...fee, amount: String(fee.amount) })),
  },
  // A decimal string in the schema (a protocol weight, not an amount).
  OrderPayment: {
    weight: (payment) => String(payment.weight),
  },
};
