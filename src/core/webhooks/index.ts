export { configureWebhook, type ConfigureWebhookParameters } from './configureWebhook.js';
export { createWebhookDispatcher, defaultWebhookSettings, retryDelay, type WebhookDispatcher, type WebhookSettings } from './createWebhookDispatcher.js';
export { listWebhookDeliveries, type ListWebhookDeliveriesParameters } from './listWebhookDeliveries.js';
export { replayWebhookDelivery, type ReplayWebhookDeliveryParameters } from './replayWebhookDelivery.js';
export { signWebhook, verifyWebhookSignature, signatureHeader, signatureTimestampHeader } from './signature.js';
export { toWebhookStatusData, webhookBodyText, webhookEventName, type WebhookBody, type WebhookStatusData } from './webhookPayload.js';
export { deriveWebhookEncryptionKey, openWebhookSecret, sealWebhookSecret } from './webhookSecret.js';
export { checkWebhookUrl, isPrivateAddress } from './webhookUrl.js';
