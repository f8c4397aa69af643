import { CHANGE_TYPES, EVENT_LIMITS } from '@people-service/domain'
import { Type } from '@sinclair/typebox'

/** One event as GET /events answers it: a CloudEvents 1.0 JSON object (docs/API.md, "Events"). */
export const CloudEventSchema = Type.Object({
  specversion: Type.Literal('1.0'),
  id: Type.String({ description: 'unique per event (UUIDv7): consumers de-duplicate by it' }),
  source: Type.String({ description: 'EVENTS_SOURCE (default /people-service)' }),
  type: Type.Union(CHANGE_TYPES.map((type) => Type.Literal(type))),
  subject: Type.String({ description: 'the resource\'s path, e.g. /person/<id>' }),
  time: Type.String({ format: 'date-time', description: 'when the change was made' }),
  datacontenttype: Type.Literal('application/json'),
  actorkind: Type.Union([Type.Literal('account'), Type.Literal('apikey')], { description: 'who made the change: an account or an API key' }),
  actorid: Type.String({ description: 'the id of that account or key' }),
  data: Type.Record(Type.String(), Type.Unknown(), { description: 'the resource as its GET answers after the change; { "id" } when deleted (a friendship: { "personId", "friendId" })' })
}, { $id: 'CloudEvent', description: 'A change, as a CloudEvents 1.0 JSON object; never a password, hash or key secret' })

export const EventsQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: EVENT_LIMITS.limit.max, default: EVENT_LIMITS.limit.default })),
  cursor: Type.Optional(Type.String({ maxLength: 512, description: 'from the Link rel="next" header of the previous page (present on every page)' })),
  type: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: `comma-separated event types, e.g. person.created,person.deleted; known: ${CHANGE_TYPES.join(', ')}` })),
  subject: Type.Optional(Type.String({ minLength: 1, maxLength: EVENT_LIMITS.subjectLength, description: 'only the events of this resource, e.g. /person/<id>' })),
  wait: Type.Optional(Type.Integer({ minimum: 0, maximum: EVENT_LIMITS.maxWaitSeconds, default: 0, description: 'seconds to wait, when nothing newer exists yet, for something that does' }))
}, { additionalProperties: false })
