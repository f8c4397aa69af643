import { CHANGE_TYPES, type ChangeType, isChangeType } from '../change/change-event.js'
import { validationError } from '../errors.js'
import { characterCount } from '../shared/text.js'

/**
 * Bounds of the webhooks of one deployment: each webhook is a delivery row
 * per event and a slot of the dispatcher, so their number is capped.
 */
export const WEBHOOK_LIMITS = {
  maxWebhooks: 50,
  urlLength: 2048,
  descriptionLength: 500,
  /** How long a delivery is retried before it is `failed` (a manual retry opens a new window). */
  retryWindowMs: 24 * 60 * 60 * 1000
} as const

export interface Webhook {
  id: string
  url: string
  /** The event types delivered to it; empty: every type. */
  types: ChangeType[]
  description: string | null
  disabled: boolean
  createdAt: Date
}

/** A webhook as stored: with its signing secret sealed (WebhookSecretBox), never in the clear. */
export interface StoredWebhook extends Webhook {
  sealedSecret: string
}

export const toWebhookView = ({ id, url, types, description, disabled, createdAt }: StoredWebhook): Webhook =>
  ({ id, url, types, description, disabled, createdAt })

export type DeliveryStatus = 'pending' | 'delivered' | 'failed'

export interface WebhookDelivery {
  id: string
  webhookId: string
  eventId: string
  status: DeliveryStatus
  attempts: number
  lastStatusCode: number | null
  /** When the next attempt is due; null once delivered or failed. */
  nextAttemptAt: Date | null
}

export interface NewWebhookInput {
  url: string
  types?: readonly string[] | undefined
  description?: string | null | undefined
}

export interface WebhookPatch {
  url?: string | undefined
  types?: readonly string[] | undefined
  description?: string | null | undefined
  disabled?: boolean | undefined
}

/**
 * The shape of a webhook URL: absolute http(s), no credentials, no fragment,
 * at most WEBHOOK_LIMITS.urlLength characters, answered normalized. Which
 * schemes and addresses are allowed is the WebhookDestinations port's to say.
 */
export const checkWebhookUrl = (url: unknown): string => {
  if (typeof url !== 'string' || url.length === 0 || url.length > WEBHOOK_LIMITS.urlLength) {
    throw validationError('url', `must be an absolute URL of 1 to ${WEBHOOK_LIMITS.urlLength} characters`)
  }
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw validationError('url', 'must be an absolute URL')
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw validationError('url', 'must be an https:// URL')
  if (parsed.username !== '' || parsed.password !== '') throw validationError('url', 'must not hold credentials')
  if (parsed.hash !== '') throw validationError('url', 'must not hold a fragment')
  // Stored as parsed (punycode, percent-encoding): the form that must fit too.
  if (parsed.href.length > WEBHOOK_LIMITS.urlLength) throw validationError('url', `must be at most ${WEBHOOK_LIMITS.urlLength} characters once normalized`)
  return parsed.href
}

/** Known event types, each once, in the contract's order. */
export const checkEventTypes = (types: readonly unknown[]): ChangeType[] => {
  const unknown = types.find((type) => typeof type !== 'string' || !isChangeType(type))
  if (unknown !== undefined) throw validationError('types', `has an unknown event type ${JSON.stringify(unknown)}; known: ${CHANGE_TYPES.join(', ')}`)
  return CHANGE_TYPES.filter((type) => types.includes(type))
}

export const checkWebhookDescription = (description: unknown): string | null => {
  if (description === null || description === undefined) return null
  if (typeof description !== 'string' || characterCount(description) > WEBHOOK_LIMITS.descriptionLength) {
    throw validationError('description', `must be a string of at most ${WEBHOOK_LIMITS.descriptionLength} characters or null`)
  }
  return description
}

/** Does a webhook want events of this type? */
export const wantsEvent = (webhook: Pick<Webhook, 'types' | 'disabled'>, type: string): boolean =>
  !webhook.disabled && (webhook.types.length === 0 || (webhook.types as readonly string[]).includes(type))
