import { deliveryNotFound, tooManyWebhooks, validationError, webhookNotFound } from '../errors.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'
import { cursorNotIssued, decodeListCursor, listKey, type Page, toPage } from '../shared/page.js'
import {
  checkEventTypes, checkWebhookDescription, checkWebhookUrl, type NewWebhookInput, type StoredWebhook, toWebhookView,
  type Webhook, type WebhookDelivery, WEBHOOK_LIMITS, type WebhookPatch
} from '../webhook/webhook.js'
import type { WebhookChanges } from '../webhook/webhook.repository.js'
import { newWebhookSecret } from '../webhook/webhook-secrets.js'
import { checkLimit, LIST_LIMITS } from './limits.js'

export type WebhookPorts = Pick<Ports, 'webhooks' | 'webhookSecrets' | 'webhookDestinations' | 'clock' | 'ids'>

export interface CreatedWebhook extends Webhook {
  /** The signing secret: shown once, stored sealed. */
  secret: string
}

export interface PageInput {
  limit?: number
  cursor?: string
}

/** A URL of the right shape that the destinations allow; 400 naming `url` otherwise. */
const allowedUrl = async ({ webhookDestinations }: Pick<WebhookPorts, 'webhookDestinations'>, url: unknown): Promise<string> => {
  const checked = checkWebhookUrl(url)
  const refusal = await webhookDestinations.refusal(checked)
  if (refusal !== undefined) throw validationError('url', refusal)
  return checked
}

const findWebhook = async ({ webhooks }: Pick<WebhookPorts, 'webhooks'>, id: string): Promise<StoredWebhook> => {
  const webhook = isId(id) ? await webhooks.findById(id) : undefined
  if (webhook === undefined) throw webhookNotFound(id)
  return webhook
}

const idCursor = (list: string, cursor: string): string => {
  const [id = ''] = decodeListCursor(cursor, list, 1)
  if (!isId(id)) throw cursorNotIssued()
  return id
}

/** The webhooks' use cases; who may call them (admins) is the adapters' policy. */
export const webhookUseCases = (ports: WebhookPorts) => ({
  async createWebhook (input: NewWebhookInput): Promise<CreatedWebhook> {
    const types = checkEventTypes(input.types ?? [])
    const description = checkWebhookDescription(input.description)
    const url = await allowedUrl(ports, input.url)
    // Two creations at once may both pass the cap, by one each: bounded by the requests in flight.
    if (await ports.webhooks.count() >= WEBHOOK_LIMITS.maxWebhooks) throw tooManyWebhooks(WEBHOOK_LIMITS.maxWebhooks)
    const id = ports.ids.next()
    const secret = newWebhookSecret()
    const webhook: StoredWebhook = {
      id, url, types, description, disabled: false, createdAt: ports.clock.now(), sealedSecret: ports.webhookSecrets.seal(id, secret)
    }
    await ports.webhooks.insert(webhook)
    return { ...toWebhookView(webhook), secret }
  },

  async listWebhooks (input: PageInput): Promise<Page<Webhook>> {
    const limit = checkLimit(input.limit ?? LIST_LIMITS.webhooks.default, LIST_LIMITS.webhooks.max)
    const afterId = input.cursor === undefined ? undefined : idCursor('webhooks', input.cursor)
    const rows = await ports.webhooks.list({ limit: limit + 1, ...(afterId === undefined ? {} : { afterId }) })
    const page = toPage(rows, limit, (webhook) => listKey('webhooks', webhook.id))
    return { ...page, items: page.items.map(toWebhookView) }
  },

  async getWebhook (id: string): Promise<Webhook> {
    return toWebhookView(await findWebhook(ports, id))
  },

  async updateWebhook (id: string, patch: WebhookPatch): Promise<Webhook> {
    await findWebhook(ports, id)
    const changes: WebhookChanges = {}
    if (patch.types !== undefined) changes.types = checkEventTypes(patch.types)
    if (patch.description !== undefined) changes.description = checkWebhookDescription(patch.description)
    if (patch.disabled !== undefined) changes.disabled = patch.disabled
    if (patch.url !== undefined) changes.url = await allowedUrl(ports, patch.url)
    const updated = await ports.webhooks.update(id, changes)
    if (updated === undefined) throw webhookNotFound(id)
    return toWebhookView(updated)
  },

  async deleteWebhook (id: string): Promise<void> {
    if (!isId(id) || !await ports.webhooks.remove(id)) throw webhookNotFound(id)
  },

  async listDeliveries (webhookId: string, input: PageInput): Promise<Page<WebhookDelivery>> {
    await findWebhook(ports, webhookId)
    const limit = checkLimit(input.limit ?? LIST_LIMITS.deliveries.default, LIST_LIMITS.deliveries.max)
    const list = `deliveries:${webhookId}`
    const beforeId = input.cursor === undefined ? undefined : idCursor(list, input.cursor)
    const rows = await ports.webhooks.listDeliveries({ webhookId, limit: limit + 1, ...(beforeId === undefined ? {} : { beforeId }) })
    return toPage(rows, limit, (delivery) => listKey(list, delivery.id))
  },

  /** Due at once, with a fresh retry window; sent while the webhook is enabled. */
  async retryDelivery (webhookId: string, deliveryId: string): Promise<{ id: string, status: 'pending' }> {
    await findWebhook(ports, webhookId)
    if (!isId(deliveryId) || !await ports.webhooks.retryDelivery(webhookId, deliveryId, ports.clock.now())) throw deliveryNotFound(deliveryId)
    return { id: deliveryId, status: 'pending' }
  }
})

export type WebhookUseCases = ReturnType<typeof webhookUseCases>
