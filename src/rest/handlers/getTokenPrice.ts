import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { formatUsdPrice } from '../../core/usd.js';
import { getTokenPrice as getTokenPriceCore } from '../../core/catalogue/getTokenPrice.js';
import type { RestContext } from '../context.js';

/**
 * GET /currencies/token/price. The wire `price` is a JSON number (the reference's type): the nearest double to
 * the exact decimal price, for display only.
 */
export async function getTokenPrice(
  input: OperationInput<'getTokenPrice'>,
  context: RestContext,
): Promise<OperationOutput<'getTokenPrice'>> {
  const { price } = await getTokenPriceCore(context.core, {
    chainId: input.query.chainId,
    address: input.query.address,
  });
  return { status: 200, body: { price: Number(formatUsdPrice(price)) } };
}
