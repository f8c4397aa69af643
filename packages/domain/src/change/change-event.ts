import type { AccountView } from '../account/account.js'
import type { ApiKeyView } from '../api-key/api-key.js'
import type { Caller } from '../caller/caller.js'
import type { Message } from '../message/message.js'
import type { Person } from '../person/person.js'
import type { Clock } from '../shared/clock.js'
import type { IdGenerator } from '../shared/ids.js'

/** The CloudEvents `source` when EVENTS_SOURCE is not set. */
export const DEFAULT_EVENT_SOURCE = '/people-service'

/** Every kind of change the service records (docs/API.md, "Events"). */
export const CHANGE_TYPES = [
  'person.created', 'person.updated', 'person.deleted',
  'friendship.created', 'friendship.deleted',
  'message.sent',
  'account.created', 'account.updated', 'account.deleted',
  'apikey.created', 'apikey.deleted'
] as const
export type ChangeType = typeof CHANGE_TYPES[number]

export const isChangeType = (value: string): value is ChangeType => (CHANGE_TYPES as readonly string[]).includes(value)

/** Who made a change: the account or API key that called. */
export type Actor = Pick<Caller, 'id' | 'kind'>

/** The CloudEvents `actorkind` extension of an actor. */
export type ActorKind = 'account' | 'apikey'

export const actorKindOf = (actor: Actor): ActorKind => (actor.kind === 'apiKey' ? 'apikey' : 'account')

/** JSON as an event's data holds it: what JSON.stringify makes of it (dates become ISO strings). */
export type ChangeData = Readonly<Record<string, unknown>>

/**
 * One change as a use case records it: the CloudEvents 1.0 attributes but
 * `source`, which is the deployment's (EVENTS_SOURCE), and the position,
 * which the log gives it at commit.
 */
export interface ChangeEvent {
  id: string
  type: ChangeType
  /** The resource's path: `/person/<id>`, `/users/<id>`, … */
  subject: string
  time: Date
  actorKind: ActorKind
  actorId: string
  /** The resource as its GET answers after the change; `{ id }` when deleted. Never a secret. */
  data: ChangeData
}

/** An event as the log keeps it: its place in commit order and its source. */
export interface RecordedEvent extends ChangeEvent {
  /** Ascending in commit order: a reader that follows `position > last seen` misses none. */
  position: number
  source: string
}

/**
 * Port: the transaction's change log. `record` adds an event to the
 * transaction it belongs to; it commits with the change or not at all.
 */
export interface ChangeLog {
  record(event: ChangeEvent): void
}

/** Makes the events of one actor's changes: ids and times from the ports. */
export const changeEvents = ({ ids, clock }: { ids: IdGenerator, clock: Clock }, actor: Actor) =>
  (type: ChangeType, subject: string, data: ChangeData): ChangeEvent => ({
    id: ids.next(),
    type,
    subject,
    time: clock.now(),
    actorKind: actorKindOf(actor),
    actorId: actor.id,
    data
  })

/** A person as `GET /person/<id>` answers: everything but the version (the ETag). */
export const personData = ({ version: _version, ...person }: Person): ChangeData => person

export const messageData = (message: Message): ChangeData => ({ ...message })
export const accountData = (account: AccountView): ChangeData => ({ ...account })
export const apiKeyData = (key: ApiKeyView): ChangeData => ({ ...key })

export const subjects = {
  person: (id: string) => `/person/${id}`,
  friendship: (personId: string, friendId: string) => `/person/${personId}/friends/${friendId}`,
  message: (id: string) => `/message/${id}`,
  account: (id: string) => `/users/${id}`,
  apiKey: (id: string) => `/api-keys/${id}`
} as const

export interface ChangeFeedQuery {
  /** Events after this position only; 0 from the start. */
  after: number
  limit: number
  types?: readonly ChangeType[]
  subject?: string
}

/**
 * Port: the committed events, read in commit order (GET /events, webhooks,
 * the NATS relay).
 */
export interface ChangeFeed {
  /** Events after `after`, ascending by position, at most `limit`, of the given types and subject when given. */
  after(query: ChangeFeedQuery): Promise<RecordedEvent[]>
  /**
   * Positions up to this one have been pruned (0: none): a reader whose
   * last position is below it has missed events.
   */
  prunedThrough(): Promise<number>
  /** The last position given so far (0: none yet). */
  lastPosition(): Promise<number>
  /** Deletes at most `limit` of the oldest events recorded before `before`; answers how many went. */
  pruneBefore(before: Date, limit: number): Promise<number>
  /**
   * Calls `listener` after each transaction of this process that recorded
   * events has committed (other processes' commits are not heard: a reader
   * that waits polls too). Answers how to stop.
   */
  onCommit(listener: () => void): () => void
}

/** The CloudEvents 1.0 JSON form of an event, as every door sends it (GET /events, webhooks, NATS). */
export interface CloudEvent {
  specversion: '1.0'
  id: string
  source: string
  type: ChangeType
  subject: string
  time: string
  datacontenttype: 'application/json'
  actorkind: ActorKind
  actorid: string
  data: ChangeData
}

export const toCloudEvent = (event: RecordedEvent): CloudEvent => ({
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
