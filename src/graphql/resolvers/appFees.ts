import type { MutationResolvers, QueryResolvers } from '../../../generated/graphql/resolvers.js';
import { listAppFeeClaims, startClaim } from '../../core/appFees/claim.js';
import { getAppFeeBalances } from '../../core/appFees/getAppFeeBalances.js';

/** `Query.appFeeBalances` (operation `getAppFeeBalances`): the same core as `GET /app-fees/{wallet}/balances`. */
export const appFeeBalances: QueryResolvers['appFeeBalances'] = (_parent, { wallet }, { core }) =>
  getAppFeeBalances(core, { wallet });

/** `Query.appFeeClaims` (operation `getAppFeeClaims`): the same core as `GET /app-fees/{wallet}/claims`. */
export const appFeeClaims: QueryResolvers['appFeeClaims'] = (_parent, { wallet, limit, continuation }, { core }) =>
  listAppFeeClaims(core, {
    wallet,
    ...(limit == null ? {} : { limit }),
    ...(continuation == null ? {} : { continuation }),
  });

/**
 * `Mutation.claimAppFees` (operation `claimAppFees`): the same core as `POST /app-fees/{wallet}/claim`; the step
 * it answers is signed by the wallet and passed to `submitPermit` (kind `CLAIM`).
 */
export const claimAppFees: MutationResolvers['claimAppFees'] = (_parent, { input }, { core }) =>
  startClaim(core, {
    wallet: input.wallet,
    chainId: input.chainId,
    currency: input.currency,
    recipient: input.recipient,
    ...(input.amount == null ? {} : { amount: input.amount }),
  });
