import type { StoredWebhook, WebhookDelivery } from './webhook.js'

export interface WebhookChanges {
  url?: string
  types?: StoredWebhook['types']
  description?: string | null
  disabled?: boolean
}

/** Port: where webhooks and the log of their deliveries are kept. */
export interface WebhookRepository {
  insert(webhook: StoredWebhook): Promise<void>
  findById(id: string): Promise<StoredWebhook | undefined>
  /** Ordered by id (creation order), after `afterId` when given. */
  list(query: { limit: number, afterId?: string }): Promise<StoredWebhook[]>
  count(): Promise<number>
  /** The webhook after the change; undefined when there is none. */
  update(id: string, changes: WebhookChanges): Promise<StoredWebhook | undefined>
  /** Removes the webhook and its deliveries; false when there was none. */
  remove(id: string): Promise<boolean>
  /** A webhook's deliveries, newest first, before `beforeId` when given. */
  listDeliveries(query: { webhookId: string, limit: number, beforeId?: string }): Promise<WebhookDelivery[]>
  /** Makes a delivery pending again, due `at`; false when the webhook has no such delivery. */
  retryDelivery(webhookId: string, deliveryId: string, at: Date): Promise<boolean>
}
