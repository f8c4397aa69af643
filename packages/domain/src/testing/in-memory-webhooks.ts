import type { StoredWebhook, WebhookDelivery } from '../webhook/webhook.js'
import type { WebhookRepository } from '../webhook/webhook.repository.js'

/** Webhooks and deliveries over maps; deliveries are added by `record` (what a relay would do). */
export const inMemoryWebhookRepository = (): WebhookRepository & { record(delivery: WebhookDelivery): void } => {
  const webhooks = new Map<string, StoredWebhook>()
  const deliveries = new Map<string, WebhookDelivery>()
  const clone = <T>(value: T): T => structuredClone(value)
  return {
    async insert (webhook) { webhooks.set(webhook.id, clone(webhook)) },
    async findById (id) {
      const webhook = webhooks.get(id)
      return webhook && clone(webhook)
    },
    async list ({ limit, afterId }) {
      return [...webhooks.values()].filter((w) => afterId === undefined || w.id > afterId).sort((a, b) => (a.id < b.id ? -1 : 1)).slice(0, limit).map(clone)
    },
    async count () { return webhooks.size },
    async update (id, changes) {
      const webhook = webhooks.get(id)
      if (webhook === undefined) return undefined
      const updated = { ...webhook, ...changes }
      webhooks.set(id, updated)
      return clone(updated)
    },
    async remove (id) {
      for (const [key, delivery] of deliveries) if (delivery.webhookId === id) deliveries.delete(key)
      return webhooks.delete(id)
    },
    async listDeliveries ({ webhookId, limit, beforeId }) {
      return [...deliveries.values()]
        .filter((d) => d.webhookId === webhookId && (beforeId === undefined || d.id < beforeId))
        .sort((a, b) => (a.id < b.id ? 1 : -1)).slice(0, limit).map(clone)
    },
    async retryDelivery (webhookId, deliveryId, at) {
      const delivery = deliveries.get(deliveryId)
      if (delivery === undefined || delivery.webhookId !== webhookId) return false
      deliveries.set(deliveryId, { ...delivery, status: 'pending', nextAttemptAt: at })
      return true
    },
    record (delivery) { deliveries.set(delivery.id, clone(delivery)) }
  }
}
