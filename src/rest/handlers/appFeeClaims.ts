import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { listAppFeeClaims, startClaim } from '../../core/appFees/claim.js';
import type { RestContext } from '../context.js';
import { toWire } from '../wire.js';

/** POST /app-fees/{wallet}/claim: the `authorize` signature step of a new claim. */
export async function claimAppFees(
  input: OperationInput<'claimAppFees'>,
  context: RestContext,
): Promise<OperationOutput<'claimAppFees'>> {
  const { chainId, currency, recipient, amount } = input.body;
  const result = await startClaim(context.core, {
    wallet: input.params.wallet,
    chainId,
    currency,
    recipient,
    ...(amount === undefined ? {} : { amount: BigInt(amount) }),
  });
  return { status: 200, body: result };
}

/** GET /app-fees/{wallet}/claims */
export async function getAppFeeClaims(
  input: OperationInput<'getAppFeeClaims'>,
  context: RestContext,
): Promise<OperationOutput<'getAppFeeClaims'>> {
  const result = await listAppFeeClaims(context.core, {
    wallet: input.params.wallet,
    ...(input.query.limit === undefined ? {} : { limit: input.query.limit }),
    ...(input.query.continuation === undefined ? {} : { continuation: input.query.continuation }),
  });
  return { status: 200, body: { claims: toWire(result.claims), continuation: result.continuation } };
}
