import {
  listWebhookDeliveries as listDeliveries,
  type WebhookDelivery,
} from '../../store/webhookDeliveries.repository.js';
import type { CoreContext } from '../context.js';

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
 * next one is due) with every attempt's status code, error and duration. For the admin surface.
 */
export async function listWebhookDeliveries(
  ctx: CoreContext,
  params: ListWebhookDeliveriesParameters,
): Promise<ListWebhookDeliveriesReturnType> {
  return listDeliveries(ctx.db, params);
}
