import { getApiKey } from '../../store/apiKeys.repository.js';
import { getWebhookDelivery, insertWebhookReplay } from '../../store/webhookDeliveries.repository.js';
import type { WebhookDelivery } from '../../records/webhookDelivery.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';

export interface ReplayWebhookDeliveryParameters {
  deliveryId: number;
  /** When given, the delivery must belong to this key (an admin acting for one key). */
  apiKeyId?: string;
}
export type ReplayWebhookDeliveryReturnType = WebhookDelivery;

/**
 * Send an event again: enqueue a copy of a delivery (whatever became of it) with a fresh log, due now, to the
 * key's current webhook URL. The body is the same event, with the same `timestamp`; the signature is new.
 *
 * @throws `NOT_FOUND` for an unknown delivery (or one of another key); `CONFLICT` when the key's webhook is
 *   disabled or removed, or the key is revoked.
 */
export async function replayWebhookDelivery(
  ctx: CoreContext,
  params: ReplayWebhookDeliveryParameters,
): Promise<ReplayWebhookDeliveryReturnType> {
  const original = await getWebhookDelivery(ctx.db, params.deliveryId);
  if (original === undefined || (params.apiKeyId !== undefined && original.apiKeyId !== params.apiKeyId)) {
    throw new GatewayError('NOT_FOUND', `No webhook delivery ${params.deliveryId}`);
  }
  const key = await getApiKey(ctx.db, original.apiKeyId);
  if (key === undefined || key.revokedAt !== null || key.webhook === null || !key.webhook.enabled) {
    throw new GatewayError('CONFLICT', 'The webhook of this API key is disabled: enable it before replaying');
  }
  const replay = await insertWebhookReplay(ctx.db, original.id, ctx.now());
  if (replay === undefined) throw new GatewayError('NOT_FOUND', `No webhook delivery ${params.deliveryId}`);
  ctx.webhooks?.wake();
  return replay;
}
