import type { OperationHandlers } from '../../../generated/openapi/operations.js';
import type { RestContext } from '../context.js';
import {
  createApiKey,
  getApiKey,
  listApiKeys,
  listWebhookDeliveries,
  replayWebhookDelivery,
  revokeApiKey,
  rotateApiKey,
  updateApiKey,
} from './adminApiKeys.js';
import { claimAppFees, getAppFeeClaims } from './appFeeClaims.js';
import { getInventory } from './adminInventory.js';
import { getAppFeeBalances } from './getAppFeeBalances.js';
import { getChains } from './getChains.js';
import { getChainsLiquidity } from './getChainsLiquidity.js';
import { getCurrencies } from './getCurrencies.js';
import { getCurrenciesV1 } from './getCurrenciesV1.js';
import { getSwapSources } from './getSwapSources.js';
import { getDepositAddress, reindexDepositAddress } from './depositAddresses.js';
import { getTokenPrice } from './getTokenPrice.js';
import { executeGasless } from './executeGasless.js';
import { fastFill } from './fastFill.js';
import { getConfig } from './getConfig.js';
import { getPrice, getQuote, getQuoteV1 } from './getQuote.js';
import { getChainHealth, getHealth, getReadiness } from './health.js';
import { getIntentStatus } from './getIntentStatus.js';
import { getIntentStatusV1 } from './getIntentStatusV1.js';
import { getRequests } from './getRequests.js';
import { getRequestsV2 } from './getRequestsV2.js';
import { getRequestSignature } from './getRequestSignature.js';
import { requestRefund } from './requestRefund.js';
import { indexSingleTransaction } from './indexSingleTransaction.js';
import { indexTransaction } from './indexTransaction.js';
import { submitPermit } from './submitPermit.js';
import { getIntentStatusV2 } from './getIntentStatusV2.js';
import { getRequestSignatureV2 } from './getRequestSignatureV2.js';
import { getTokenPriceV2 } from './getTokenPriceV2.js';
import { getTrendingCurrencies } from './getTrendingCurrencies.js';

/** Every operation of the contract must appear here; a missing one is a compile error. */
export function createHandlers(): OperationHandlers<RestContext> {
  return {
    getChains,
    getChainHealth,
    getIntentStatusV2,
    getRequestSignatureV2,
    getTokenPriceV2,
    getTrendingCurrencies,
    getHealth,
    getReadiness,
    getQuote,
    getQuoteV1,
    getPrice,
    getIntentStatus,
    getIntentStatusV1,
    getRequests,
    getRequestsV2,
    getRequestSignature,
    requestRefund,
    executeGasless,
    submitPermit,
    getChainsLiquidity,
    getCurrenciesV1,
    getCurrencies,
    getTokenPrice,
    indexTransaction,
    indexSingleTransaction,
    reindexDepositAddress,
    getDepositAddress,
    getAppFeeBalances,
    claimAppFees,
    getAppFeeClaims,
    fastFill,
    getSwapSources,
    getConfig,
    createApiKey,
    listApiKeys,
    getApiKey,
    updateApiKey,
    rotateApiKey,
    revokeApiKey,
    listWebhookDeliveries,
    replayWebhookDelivery,
    getInventory,
  };
}
