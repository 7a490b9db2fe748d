import { listWebhookDeliveries as listDeliveries } from '../../store/webhookDeliveries.repository.js';
import type { WebhookDelivery } from '../../records/webhookDelivery.js';
import { getApiKey } from '../../store/apiKeys.repository.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';

export interface ListWebhookDeliveriesParameters {
  apiKeyId: string;
  /** 1 to 100; default 50. */
  limit?: number;
  /** The last id of the previous page: older deliveries follow. */
  beforeId?: number;
}
export type ListWebhookDeliveriesReturnType = WebhookDelivery[];

/**
 * The delivery log of an API key's webhook, newest first: each delivery (event, status, attempts, when the
 * next one is due) with every attempt's status code, error and duration (`GET
 * /admin/api-keys/{id}/webhook-deliveries`). Throws `NOT_FOUND` for an unknown key.
 */
export async function listWebhookDeliveries(
  ctx: Pick<CoreContext, 'db'>,
  params: ListWebhookDeliveriesParameters,
): Promise<ListWebhookDeliveriesReturnType> {
  if ((await getApiKey(ctx.db, params.apiKeyId)) === undefined)
    throw new GatewayError('NOT_FOUND', `No API key with id ${params.apiKeyId}`);
  return listDeliveries(ctx.db, params);
}
