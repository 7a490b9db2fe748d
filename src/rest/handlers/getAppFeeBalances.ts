import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { getAppFeeBalances as getAppFeeBalancesCore } from '../../core/appFees/getAppFeeBalances.js';
import type { RestContext } from '../context.js';
import { toWire } from '../wire.js';

/** GET /app-fees/{wallet}/balances. USD totals are JSON numbers on the wire (the reference's type), for display. */
export async function getAppFeeBalances(
  input: OperationInput<'getAppFeeBalances'>,
  context: RestContext,
): Promise<OperationOutput<'getAppFeeBalances'>> {
  const result = await getAppFeeBalancesCore(context.core, { wallet: input.params.wallet });
  return {
    status: 200,
    body: {
      balances: toWire(result.balances),
      totalBalanceUsd: Number(result.totalBalanceUsd),
      outstandingFastFillBalanceUsd: Number(result.outstandingFastFillBalanceUsd),
      availableBalanceUsd: Number(result.availableBalanceUsd),
    },
  };
}
