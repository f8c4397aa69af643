import { LIST_LIMITS } from '@people-service/domain'
import { Type } from '@sinclair/typebox'

// Optional: a client may leave it out, and the default fills it in (Ajv's useDefaults).
const limit = (list: { default: number, max: number }) =>
  Type.Optional(Type.Integer({ minimum: 1, maximum: list.max, default: list.default }))

const Cursor = Type.String({ maxLength: 512, description: 'from the Link rel="next" header of the previous page' })

export const PeopleQuery = Type.Object({
  limit: limit(LIST_LIMITS.people),
  cursor: Type.Optional(Cursor),
  // 1–200 characters, as GraphQL's people(name:) (the contract gives both the same limit).
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'case-insensitive substring of the name, 1–200 characters' }))
}, { additionalProperties: false })

export const FriendsQuery = Type.Object({
  limit: limit(LIST_LIMITS.friends),
  cursor: Type.Optional(Cursor)
}, { additionalProperties: false })

export const InboxQuery = Type.Object({
  limit: limit(LIST_LIMITS.inbox),
  cursor: Type.Optional(Cursor)
}, { additionalProperties: false })

export const AccountsQuery = Type.Object({
  limit: limit(LIST_LIMITS.accounts),
  cursor: Type.Optional(Cursor)
}, { additionalProperties: false })

export const ApiKeysQuery = Type.Object({
  limit: limit(LIST_LIMITS.apiKeys),
  cursor: Type.Optional(Cursor)
}, { additionalProperties: false })

export const WebhooksQuery = Type.Object({
  limit: limit(LIST_LIMITS.webhooks),
  cursor: Type.Optional(Cursor)
}, { additionalProperties: false })

export const DeliveriesQuery = Type.Object({
  limit: limit(LIST_LIMITS.deliveries),
  cursor: Type.Optional(Cursor)
}, { additionalProperties: false })
