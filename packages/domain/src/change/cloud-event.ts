import type { RecordedEvent } from './change-event.js'

/** An event as other systems receive it: a CloudEvents 1.0 JSON object (docs/API.md, "Events"). */
export interface CloudEvent {
  specversion: '1.0'
  id: string
  source: string
  type: RecordedEvent['type']
  subject: string
  time: string
  datacontenttype: 'application/json'
  actorkind: RecordedEvent['actorKind']
  actorid: string
  data: RecordedEvent['data']
}

export const cloudEventOf = (event: RecordedEvent): CloudEvent => ({
  specversion: '1.0',
  id: event.id,
  source: event.source,
  type: event.type,
  subject: event.subject,
  time: event.time.toISOString(),
  datacontenttype: 'application/json',
  actorkind: event.actorKind,
  actorid: event.actorId,
  data: event.data
})
