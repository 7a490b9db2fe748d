import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { formatUsdMicros } from '../../core/usd.js';
import { getChainsLiquidity as getChainsLiquidityCore } from '../../core/catalogue/getChainsLiquidity.js';
import type { RestContext } from '../context.js';

/** GET /chains/liquidity */
export async function getChainsLiquidity(
  input: OperationInput<'getChainsLiquidity'>,
  context: RestContext,
): Promise<OperationOutput<'getChainsLiquidity'>> {
  const entries = await getChainsLiquidityCore(context.core, { chainId: input.query.chainId });
  return {
    status: 200,
    body: {
      liquidity: entries.map(({ amountUsdMicros, balance, ...entry }) => ({
        ...entry,
        balance: balance.toString(),
        amountUsd: formatUsdMicros(amountUsdMicros),
      })),
    },
  };
}
