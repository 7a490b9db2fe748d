import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import type { ApiKey, ApiKeyWithSecret } from '../../core/apiKeys/apiKey.js';
import { authorizeAdmin } from '../../core/apiKeys/authorizeAdmin.js';
import { createApiKey as createApiKeyCore } from '../../core/apiKeys/createApiKey.js';
import { getApiKey as getApiKeyCore } from '../../core/apiKeys/getApiKey.js';
import { listApiKeys as listApiKeysCore } from '../../core/apiKeys/listApiKeys.js';
import { revokeApiKey as revokeApiKeyCore } from '../../core/apiKeys/revokeApiKey.js';
import { rotateApiKey as rotateApiKeyCore } from '../../core/apiKeys/rotateApiKey.js';
import { updateApiKey as updateApiKeyCore } from '../../core/apiKeys/updateApiKey.js';
import { listWebhookDeliveries as listWebhookDeliveriesCore } from '../../core/webhooks/listWebhookDeliveries.js';
import { replayWebhookDelivery as replayWebhookDeliveryCore } from '../../core/webhooks/replayWebhookDelivery.js';
import type { RestContext } from '../context.js';

type WireApiKey =
  OperationOutput<'getApiKey'> extends infer O
    ? O extends { status: 200; body: { apiKey: infer K } }
      ? K
      : never
    : never;

/** The core's key as the contract's `ApiKey` (limits and webhook are passed as stored). */
const toWire = (apiKey: ApiKey): WireApiKey => apiKey;
const withSecret = ({ apiKey, key }: ApiKeyWithSecret) => ({ apiKey: toWire(apiKey), key });

const admin = (input: { headers: { authorization?: string } }, context: RestContext): void =>
  authorizeAdmin(context.admin.token, input.headers.authorization);

/** POST /admin/api-keys */
export async function createApiKey(
  input: OperationInput<'createApiKey'>,
  context: RestContext,
): Promise<OperationOutput<'createApiKey'>> {
  admin(input, context);
  const created = await createApiKeyCore(context.core, input.body, {
    allowPrivateWebhooks: context.admin.allowPrivateWebhooks,
    sealWebhookSecret: context.admin.sealWebhookSecret,
  });
  return { status: 201, body: withSecret(created) };
}

/** GET /admin/api-keys */
export async function listApiKeys(
  input: OperationInput<'listApiKeys'>,
  context: RestContext,
): Promise<OperationOutput<'listApiKeys'>> {
  admin(input, context);
  const apiKeys = await listApiKeysCore(context.core, { includeRevoked: input.query.includeRevoked });
  return { status: 200, body: { apiKeys: apiKeys.map(toWire) } };
}

/** GET /admin/api-keys/{id} */
export async function getApiKey(
  input: OperationInput<'getApiKey'>,
  context: RestContext,
): Promise<OperationOutput<'getApiKey'>> {
  admin(input, context);
  return { status: 200, body: { apiKey: toWire(await getApiKeyCore(context.core, input.params.id)) } };
}

/** PATCH /admin/api-keys/{id} */
export async function updateApiKey(
  input: OperationInput<'updateApiKey'>,
  context: RestContext,
): Promise<OperationOutput<'updateApiKey'>> {
  admin(input, context);
  const apiKey = await updateApiKeyCore(context.core, input.params.id, input.body, {
    allowPrivateWebhooks: context.admin.allowPrivateWebhooks,
  });
  return { status: 200, body: { apiKey: toWire(apiKey) } };
}

/** POST /admin/api-keys/{id}/rotate */
export async function rotateApiKey(
  input: OperationInput<'rotateApiKey'>,
  context: RestContext,
): Promise<OperationOutput<'rotateApiKey'>> {
  admin(input, context);
  const rotated = await rotateApiKeyCore(context.core, input.params.id, {
    sealWebhookSecret: context.admin.sealWebhookSecret,
  });
  return { status: 200, body: withSecret(rotated) };
}

/** POST /admin/api-keys/{id}/revoke */
export async function revokeApiKey(
  input: OperationInput<'revokeApiKey'>,
  context: RestContext,
): Promise<OperationOutput<'revokeApiKey'>> {
  admin(input, context);
  return { status: 200, body: { apiKey: toWire(await revokeApiKeyCore(context.core, input.params.id)) } };
}

/** GET /admin/api-keys/{id}/webhook-deliveries */
export async function listWebhookDeliveries(
  input: OperationInput<'listWebhookDeliveries'>,
  context: RestContext,
): Promise<OperationOutput<'listWebhookDeliveries'>> {
  admin(input, context);
  const deliveries = await listWebhookDeliveriesCore(context.core, {
    apiKeyId: input.params.id,
    ...(input.query.limit === undefined ? {} : { limit: input.query.limit }),
    ...(input.query.before === undefined ? {} : { beforeId: input.query.before }),
  });
  return { status: 200, body: { deliveries } };
}

/** POST /admin/api-keys/{id}/webhook-deliveries/{deliveryId}/replay */
export async function replayWebhookDelivery(
  input: OperationInput<'replayWebhookDelivery'>,
  context: RestContext,
): Promise<OperationOutput<'replayWebhookDelivery'>> {
  admin(input, context);
  const delivery = await replayWebhookDeliveryCore(context.core, {
    apiKeyId: input.params.id,
    deliveryId: input.params.deliveryId,
  });
  return { status: 201, body: { delivery } };
}
