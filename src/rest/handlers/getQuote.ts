import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { getPrice as getPriceCore, getQuote as getQuoteCore } from '../../core/quote/getQuote.js';
import { unsupportedQuoteOptions, type Price, type Quote, type QuoteParameters } from '../../core/quote/types.js';
import { toWire } from '../wire.js';
import type { RestContext } from '../context.js';

type QuoteBody = OperationInput<'getQuote'>['body'];
type PriceBody = OperationInput<'getPrice'>['body'];

/** The core's quote parameters from a validated `/quote/v2`, `/quote` or `/price` body (amounts to bigint). */
function toQuoteParameters(body: QuoteBody | PriceBody): QuoteParameters {
  const quote = body as QuoteBody;
  return {
    ...quote,
    amount: BigInt(body.amount),
    txs: body.txs?.map((tx) => ({
      to: tx.to,
      data: tx.data,
      value: tx.value === undefined ? undefined : BigInt(tx.value),
    })),
    maxSubsidizationAmount:
      quote.maxSubsidizationAmount === undefined ? undefined : BigInt(quote.maxSubsidizationAmount),
    unsupported: Object.fromEntries(
      unsupportedQuoteOptions.map((option) => [option, (quote as Record<string, unknown>)[option]]),
    ),
  };
}

/** The wire form of a quote or price: amounts as strings, and the slippage total as a bps string. */
function toWireQuote<T extends Price>(quote: T) {
  const wire = toWire(quote);
  return {
    ...wire,
    details: {
      ...wire.details,
      slippageTolerance: { ...wire.details.slippageTolerance, total: String(quote.details.slippageTolerance.total) },
    },
  };
}

function wireQuote(quote: Quote) {
  const { requestId: _requestId, ...rest } = quote;
  return toWireQuote(rest);
}

/** POST /quote/v2 */
export async function getQuote(
  input: OperationInput<'getQuote'>,
  context: RestContext,
): Promise<OperationOutput<'getQuote'>> {
  const { caller } = context;
  const quote = await getQuoteCore(context.core, toQuoteParameters(input.body), caller);
  return { status: 200, body: wireQuote(quote) };
}

/** POST /quote (deprecated; the same as /quote/v2) */
export async function getQuoteV1(
  input: OperationInput<'getQuoteV1'>,
  context: RestContext,
): Promise<OperationOutput<'getQuoteV1'>> {
  const { caller } = context;
  const quote = await getQuoteCore(context.core, toQuoteParameters(input.body), caller);
  return { status: 200, body: wireQuote(quote) };
}

/** POST /price */
export async function getPrice(
  input: OperationInput<'getPrice'>,
  context: RestContext,
): Promise<OperationOutput<'getPrice'>> {
  const { caller } = context;
  const price = await getPriceCore(context.core, toQuoteParameters(input.body), caller);
  return { status: 200, body: toWireQuote(price) };
}
