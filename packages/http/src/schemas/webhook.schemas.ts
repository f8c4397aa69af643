import { CHANGE_TYPES, type ChangeType, WEBHOOK_LIMITS } from '@people-service/domain'
import { Type } from '@sinclair/typebox'
import { Nullable, Timestamp } from './nullable.js'

const EventTypeSchema = Type.Unsafe<ChangeType>({ type: 'string', enum: [...CHANGE_TYPES] })

const Url = Type.String({
  minLength: 1,
  maxLength: WEBHOOK_LIMITS.urlLength,
  description: 'https:// and a public address (checked again at each delivery); WEBHOOK_ALLOW_PRIVATE=true allows http:// and private addresses'
})
const Types = Type.Array(EventTypeSchema, { maxItems: CHANGE_TYPES.length * 2, description: 'the event types delivered; empty or left out: every type' })
const Description = Type.String({ maxLength: WEBHOOK_LIMITS.descriptionLength })

export const NewWebhookSchema = Type.Object({
  url: Url,
  types: Type.Optional(Types),
  description: Type.Optional(Nullable(Description))
}, { additionalProperties: false })

export const WebhookChangesSchema = Type.Object({
  url: Type.Optional(Url),
  types: Type.Optional(Types),
  description: Type.Optional(Nullable(Description)),
  disabled: Type.Optional(Type.Boolean({ description: 'a disabled webhook is sent nothing; its pending deliveries wait' }))
}, { additionalProperties: false })

const webhookFields = {
  id: Type.String(),
  url: Type.String(),
  types: Type.Array(EventTypeSchema),
  description: Nullable(Type.String()),
  disabled: Type.Boolean(),
  createdAt: Timestamp
}

export const WebhookSchema = Type.Object(webhookFields)

export const CreatedWebhookSchema = Type.Object({
  ...webhookFields,
  secret: Type.String({ description: 'whsec_ and base64 of 32 random bytes: the signing secret, shown in this response only' })
})

export const DeliverySchema = Type.Object({
  id: Type.String(),
  eventId: Type.String(),
  status: Type.Unsafe<'pending' | 'delivered' | 'failed'>({ type: 'string', enum: ['pending', 'delivered', 'failed'] }),
  attempts: Type.Integer(),
  lastStatusCode: Nullable(Type.Integer()),
  nextAttemptAt: Type.Unsafe<Date | null>({ type: ['string', 'null'], format: 'date-time', description: 'when the next attempt is due; null once delivered or failed' })
})

export const WebhookIdParams = Type.Object({ id: Type.String() })
export const DeliveryParams = Type.Object({ id: Type.String(), deliveryId: Type.String() })
