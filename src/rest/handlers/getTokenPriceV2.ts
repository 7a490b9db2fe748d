import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { getTokenPrice as getTokenPriceCore } from '../../core/catalogue/getTokenPrice.js';
import { formatUsdPrice } from '../../core/usd.js';
import type { RestContext } from '../context.js';

/** GET /currencies/token/price/v2: the exact decimal price (v1 sends the nearest JSON number). */
export async function getTokenPriceV2(
  input: OperationInput<'getTokenPriceV2'>,
  context: RestContext,
): Promise<OperationOutput<'getTokenPriceV2'>> {
  const { price } = await getTokenPriceCore(context.core, {
    chainId: input.query.chainId,
    address: input.query.address,
  });
  return { status: 200, body: { price: formatUsdPrice(price) } };
}
