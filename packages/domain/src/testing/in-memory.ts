import { personNotFound } from '../errors.js'
import type { FriendEntry, FriendshipRepository } from '../friendship/friendship.repository.js'
import type { Message } from '../message/message.js'
import type { MessageEvents } from '../message/message.events.js'
import type { MessageRepository } from '../message/message.repository.js'
import { foldName, type Person, type PersonSummary } from '../person/person.js'
import type { PersonRepository } from '../person/person.repository.js'
import { referenceProjections } from '../person/reference-projections.js'
import { summariesJsonOf } from '../person/summaries-json.js'
import type { ApiKeyRepository } from '../api-key/api-key.repository.js'
import type { Ports } from '../ports.js'
import type { TransactionPorts, UnitOfWork } from '../shared/unit-of-work.js'
import { eraseAnswersAbout, inMemoryIdempotencyRepository, type StoredRecord } from './in-memory-idempotency.js'
import { inMemoryEventLog, type InMemoryEventLog } from './in-memory-changes.js'
import { inMemoryAccountRepository, inMemoryApiKeyRepository, inMemoryApiKeyUsageRepository } from './in-memory-access.js'
import { scryptPasswordHasher } from '../account/scrypt-password-hasher.js'
import { localKeyRevocations } from '../api-key/key-revocations.js'
import { systemClock } from '../shared/clock.js'
import { uuidv7Generator } from '../shared/ids.js'
import { anyWebhookDestination } from '../webhook/webhook-destinations.js'
import { aesGcmWebhookSecretBox } from '../webhook/webhook-secrets.js'
import { inMemoryWebhookRepository } from './in-memory-webhooks.js'

/** Adapters over plain maps: for tests, prototypes and services that embed the domain. */
interface Store {
  people: Map<string, Person>
  friends: Map<string, Set<string>>
  messages: Map<string, Message>
  idempotency: Map<string, StoredRecord>
  /** Each person's creation sequence, as a database's row key: it orders lists of friends. Never removed, so never reused. */
  positions: Map<string, number>
}

const emptyStore = (): Store => ({ people: new Map(), friends: new Map(), messages: new Map(), idempotency: new Map(), positions: new Map() })

const byId = (a: { id: string }, b: { id: string }): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
const newestFirst = (a: Message, b: Message): number =>
  b.sentAt.getTime() - a.sentAt.getTime() || (b.id < a.id ? -1 : b.id > a.id ? 1 : 0)
const summary = ({ id, name }: Person): PersonSummary => ({ id, name })
// Copies on the way in and out, as a database would: callers never share state with the store.
const clone = <T>(value: T): T => structuredClone(value)

const peopleRepository = (store: Store, log: InMemoryEventLog): PersonRepository => {
  const people: PersonRepository = {
    async findById (id) {
      const person = store.people.get(id)
      return person && clone(person)
    },
    async findByIds (ids) {
      return ids.flatMap((id) => {
        const person = store.people.get(id)
        return person ? [clone(person)] : []
      })
    },
    async list ({ limit, afterId, nameContains }) {
      const needle = nameContains === undefined ? undefined : foldName(nameContains)
      return [...store.people.values()]
        .filter((p) => (afterId === undefined || p.id > afterId) &&
        (needle === undefined || foldName(p.name).includes(needle)))
        .sort(byId)
        .slice(0, limit)
        .map(summary)
    },
    async listJson (query) {
      return summariesJsonOf(people, query)
    },
    async insert (person) {
      store.people.set(person.id, clone(person))
      if (!store.positions.has(person.id)) store.positions.set(person.id, store.positions.size + 1)
    },
    async update (person, expectedVersion) {
      if (store.people.get(person.id)?.version !== expectedVersion) return false
      store.people.set(person.id, clone(person))
      return true
    },
    async delete (id, expectedVersion, _beforeNextStep, events = []) {
      const stored = store.people.get(id)
      if (stored === undefined || (expectedVersion !== undefined && stored.version !== expectedVersion)) return false
      store.people.delete(id)
      for (const friendId of store.friends.get(id) ?? []) store.friends.get(friendId)?.delete(id)
      store.friends.delete(id)
      for (const message of store.messages.values()) if (message.personId === id) store.messages.delete(message.id)
      const unit = log.begin()
      for (const event of events) unit.changes.record(event)
      unit.commit()
      eraseAnswersAbout(store.idempotency, id)
      return true
    }
  }
  return people
}

/** A person's friends in creation order, after a position when given, at most `limit`. */
const friendEntriesOf = (store: Store, id: string, limit: number, after = 0): FriendEntry[] =>
  [...store.friends.get(id) ?? []]
    .flatMap((friendId) => {
      const friend = store.people.get(friendId)
      const position = store.positions.get(friendId) ?? 0
      return friend && position > after ? [{ friend: summary(friend), position }] : []
    })
    .sort((a, b) => a.position - b.position)
    .slice(0, limit)

const friendsOf = (store: Store, id: string, limit: number): PersonSummary[] =>
  friendEntriesOf(store, id, limit).map((entry) => entry.friend)

const friendshipRepository = (store: Store): FriendshipRepository => ({
  async add (personId, friendId) {
    for (const id of [personId, friendId]) if (!store.people.has(id)) throw personNotFound(id)
    if (store.friends.get(personId)?.has(friendId) === true) return false
    const link = (a: string, b: string) => {
      const set = store.friends.get(a) ?? new Set<string>()
      set.add(b)
      store.friends.set(a, set)
    }
    link(personId, friendId)
    link(friendId, personId)
    return true
  },
  async remove (personId, friendId) {
    const removed = store.friends.get(personId)?.delete(friendId) === true
    store.friends.get(friendId)?.delete(personId)
    return removed
  },
  async listFriends (personId, limit) {
    return friendsOf(store, personId, limit)
  },
  async listFriendsOfMany (personIds, limit) {
    return new Map(personIds.map((id) => [id, friendsOf(store, id, limit)]))
  },
  async pageFriends (personId, { limit, after }) {
    return friendEntriesOf(store, personId, limit, after)
  },
  async pageFriendsOfMany (personIds, limit) {
    return new Map(personIds.map((id) => [id, friendEntriesOf(store, id, limit)]))
  }
})

const inboxOf = (store: Store, personId: string): Message[] =>
  [...store.messages.values()].filter((m) => m.personId === personId).sort(newestFirst)

const messageRepository = (store: Store): MessageRepository => ({
  async insert (message) {
    if (!store.people.has(message.personId)) throw personNotFound(message.personId)
    store.messages.set(message.id, clone(message))
  },
  async findById (id) {
    const message = store.messages.get(id)
    return message && clone(message)
  },
  async listForPerson (personId, { limit, before }) {
    return inboxOf(store, personId)
      .filter((m) => before === undefined || newestFirst(m, { ...m, ...before }) > 0)
      .slice(0, limit)
      .map(clone)
  },
  async listForMany (personIds, limit) {
    return new Map(personIds.map((id) => [id, inboxOf(store, id).slice(0, limit).map(clone)]))
  }
})

/** Records published messages and hands them to listeners, in process. */
export interface InMemoryMessageEvents extends MessageEvents {
  readonly sent: Message[]
  subscribe(listener: (message: Message) => void): () => void
}

export const inMemoryMessageEvents = (): InMemoryMessageEvents => {
  const listeners = new Set<(message: Message) => void>()
  const sent: Message[] = []
  return {
    sent,
    async published (message) {
      sent.push(message)
      for (const listener of listeners) listener(message)
    },
    subscribe (listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    }
  }
}

/**
 * Transactions over the maps: one at a time, and a failed one puts back the
 * maps as they were when it began. Writes made outside a transaction while
 * one runs would be undone with it: good enough for tests and prototypes,
 * whose requests rarely overlap; a database gives the real isolation.
 */
const inMemoryUnitOfWork = (store: Store, apiKeys: ApiKeyRepository, log: InMemoryEventLog): UnitOfWork => {
  const repositories: Omit<TransactionPorts, 'changes'> = {
    people: peopleRepository(store, log),
    friendships: friendshipRepository(store),
    messages: messageRepository(store),
    apiKeys,
    idempotency: inMemoryIdempotencyRepository(store.idempotency)
  }
  let last: Promise<unknown> = Promise.resolve()
  return {
    run (work) {
      const turn = last.then(async () => {
        const before = clone(store)
        const unit = log.begin()
        try {
          const result = await work({ ...repositories, changes: unit.changes })
          unit.commit()
          return result
        } catch (error) {
          for (const name of Object.keys(before) as Array<keyof Store>) {
            const map = store[name] as Map<string, unknown>
            map.clear()
            for (const [key, value] of before[name]) map.set(key, value)
          }
          throw error
        }
      })
      last = turn.catch(() => {})
      return turn
    }
  }
}

export const createInMemoryPorts = (overrides: Partial<Ports> = {}): Ports & { events: MessageEvents, eventLog: InMemoryEventLog } => {
  const store = emptyStore()
  const apiKeys = inMemoryApiKeyRepository()
  const apiKeyUsage = inMemoryApiKeyUsageRepository()
  const eventLog = inMemoryEventLog()
  const ports = {
    eventLog,
    changeFeed: eventLog.feed,
    people: peopleRepository(store, eventLog),
    friendships: friendshipRepository(store),
    messages: messageRepository(store),
    idempotency: inMemoryIdempotencyRepository(store.idempotency),
    unitOfWork: inMemoryUnitOfWork(store, overrides.apiKeys ?? apiKeys, eventLog),
    accounts: inMemoryAccountRepository((accountId) => apiKeyUsage.remove(apiKeys.removeOwnedBy(accountId)), eventLog),
    apiKeys,
    apiKeyUsage,
    passwords: scryptPasswordHasher(),
    revocations: localKeyRevocations(),
    clock: systemClock,
    ids: uuidv7Generator(),
    events: inMemoryMessageEvents(),
    webhooks: inMemoryWebhookRepository(),
    webhookSecrets: aesGcmWebhookSecretBox(globalThis.crypto.getRandomValues(new Uint8Array(32))),
    webhookDestinations: anyWebhookDestination,
    ...overrides
  }
  // Over whichever people and friendships the ports end up with.
  return { ...ports, projections: overrides.projections ?? referenceProjections(ports) }
}
