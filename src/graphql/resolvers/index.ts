import type { Resolvers } from '../../../generated/graphql/resolvers.js';
import { enumResolvers } from '../enums.js';
import { scalarResolvers } from '../scalars.js';
import { currencies, swapSources, tokenPrice } from './catalogue.js';
import { appFeeBalances, appFeeClaims, claimAppFees } from './appFees.js';
import { chain, chains } from './chains.js';
import { executeGasless } from './executeGasless.js';
import { fastFill } from './fastFill.js';
import { inventory } from './inventory.js';
import { submitPermit } from './permits.js';
import { price, quote, quoteTypeResolvers } from './quote.js';
import { request, requests, requestStatus, requestTypeResolvers } from './requests.js';
import { requestRefund } from './requestRefund.js';
import { requestSignature } from './signature.js';
import { requestStatus as requestStatusStream, requestUpdates } from './subscriptions.js';
import { indexSingleTransaction, indexTransaction } from './transactions.js';

/**
 * Every resolver of the schema. Types backed by core objects (`Chain`) need no field resolvers: the core's
 * spelling of enums and its bigints are handled by `enumResolvers` and the `BigInt` scalar.
 */
export function createResolvers(): Resolvers {
  return {
    ...scalarResolvers,
    ...enumResolvers,
    Query: {
      chains,
      chain,
      quote,
      price,
      tokenPrice,
      currencies,
      swapSources,
      request,
      requestStatus,
      requests,
      requestSignature,
      appFeeBalances,
      appFeeClaims,
      inventory,
    },
    Mutation: {
      indexTransaction,
      indexSingleTransaction,
      fastFill,
      submitPermit,
      executeGasless,
      claimAppFees,
      requestRefund,
    },
    Subscription: { requestStatus: requestStatusStream, requestUpdates },
    ...quoteTypeResolvers,
    ...requestTypeResolvers,
    StepItemData: {
      __resolveType: (data) => ('sign' in data ? 'SignatureData' : 'TransactionData'),
    },
  };
}
