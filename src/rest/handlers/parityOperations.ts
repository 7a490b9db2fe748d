import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { getTokenPrice as getTokenPriceCore } from '../../core/catalogue/getTokenPrice.js';
import { getTrendingCurrencies as getTrendingCurrenciesCore } from '../../core/catalogue/getTrendingCurrencies.js';
import { requireChain } from '../../core/chains/requireChain.js';
import { getIntentStatusV2 as getIntentStatusV2Core } from '../../core/requests/getIntentStatusV2.js';
import { getRequestSignatureV2 as getRequestSignatureV2Core } from '../../core/requests/getRequestSignatureV2.js';
import { formatUsdPrice } from '../../core/usd.js';
import type { RestContext } from '../context.js';

/*
 * Reference operations its clients and integrators call that arrived together (issue #19): the v2 status the
 * React hooks poll, the v2 attestation, the exact token price, trending currencies and chain health.
 */

/** GET /intents/status/v2 */
export async function getIntentStatusV2(
  input: OperationInput<'getIntentStatusV2'>,
  context: RestContext,
): Promise<OperationOutput<'getIntentStatusV2'>> {
  return { status: 200, body: await getIntentStatusV2Core(context.core, { requestId: input.query.requestId }) };
}

/** GET /requests/{requestId}/signature/v2 */
export async function getRequestSignatureV2(
  input: OperationInput<'getRequestSignatureV2'>,
  context: RestContext,
): Promise<OperationOutput<'getRequestSignatureV2'>> {
  const { requestData, signature } = await getRequestSignatureV2Core(context.core, {
    requestId: input.params.requestId,
  });
  return { status: 200, body: { requestData, signature } };
}

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

/** GET /currencies/trending */
export async function getTrendingCurrencies(
  input: OperationInput<'getTrendingCurrencies'>,
  context: RestContext,
): Promise<OperationOutput<'getTrendingCurrencies'>> {
  const { chainId, sortBy, limit } = input.query;
  const items = await getTrendingCurrenciesCore(context.core, { chainId, sortBy, limit });
  return { status: 200, body: items.map(({ groupId: _groupId, ...item }) => item) };
}

/**
 * GET /chains/health: the readiness check of the chain's RPC (it answers, with the configured chain id), and
 * the chain not disabled; every chain when no `chainId` is given.
 */
export async function getChainHealth(
  input: OperationInput<'getChainHealth'>,
  context: RestContext,
): Promise<OperationOutput<'getChainHealth'>> {
  const chains =
    input.query.chainId === undefined ? context.core.config.chains : [requireChain(context.core, input.query.chainId)];
  const report = await context.readiness();
  const healthy = chains.every((chain) => !chain.disabled && report.checks[`chain:${chain.id}`]?.ok === true);
  return { status: 200, body: { healthy } };
}
