/*
 * Events and webhooks as docs/API.md ("Events: what changed, for other
 * systems") defines them.
 */

export type EventType =
  | 'person.created' | 'person.updated' | 'person.deleted'
  | 'friendship.created' | 'friendship.deleted'
  | 'message.sent'
  | 'account.created' | 'account.updated' | 'account.deleted'
  | 'apikey.created' | 'apikey.deleted'

/** A CloudEvents 1.0 JSON event: what changed, when, and who changed it. */
export interface CloudEvent<Data = unknown> {
  specversion: '1.0'
  id: string
  /** EVENTS_SOURCE of the service, `/people-service` by default. */
  source: string
  type: EventType
  /** The resource's path, e.g. `/person/<id>`. */
  subject: string
  time: string
  datacontenttype: 'application/json'
  actorkind: 'account' | 'apikey'
  actorid: string
  /** The resource as its GET returns it after the change; `{ id }` when deleted. */
  data: Data
}

export interface EventQuery {
  /** Only these types. */
  types?: EventType[] | undefined
  /** Only events of this subject, e.g. `/person/<id>`. */
  subject?: string | undefined
  /** Events per page, 1–1000 (the service's default: 100). */
  limit?: number | undefined
}

export interface Webhook {
  id: string
  url: string
  types: EventType[]
  description: string | null
  disabled: boolean
  createdAt: string
}

/** As `POST /webhooks` answers: the only time the secret is shown. */
export interface CreatedWebhook extends Webhook {
  /** `whsec_…`: give it to verifyWebhook. */
  secret: string
}

export interface NewWebhook {
  url: string
  types?: EventType[]
  description?: string
}

export interface WebhookPatch {
  url?: string
  types?: EventType[]
  description?: string | null
  disabled?: boolean
}

export interface WebhookDelivery {
  id: string
  eventId: string
  status: 'pending' | 'delivered' | 'failed'
  attempts: number
  lastStatusCode: number | null
  nextAttemptAt: string | null
}
