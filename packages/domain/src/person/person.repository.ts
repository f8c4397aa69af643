import type { ChangeEvent } from '../change/change-event.js'
import type { Person, PersonSummary } from './person.js'

export interface ListPeopleQuery {
  limit: number
  /** Only people whose id sorts after this one (keyset pagination). */
  afterId?: string
  /** Case-insensitive substring of the name. */
  nameContains?: string
  /**
   * A name search no index can answer reads the names one range at a time
   * (see the adapter); before each range after the first it awaits this, so
   * the caller can take its turn and pay for the reading. Rejecting ends the
   * search with that error. Without it, an adapter that reads in ranges
   * yields to the event loop between them.
   */
  beforeNextRange?: () => Promise<void>
}

/**
 * A page of people already as the JSON array the API answers with:
 * `[{"id":…,"name":…},…]`, the bytes JSON.stringify would give for the
 * summaries list() returns.
 */
export interface PersonSummariesJson {
  /** At most `limit` people, ordered by id. */
  json: string
  /** The id of the last of them; undefined when there are none. */
  lastId: string | undefined
  /** Whether someone else matches after the last of them; false when there are none. */
  more: boolean
}

/**
 * Port: where people are kept. A lookup that finds nothing returns
 * `undefined`; use cases decide whether that is an error.
 */
export interface PersonRepository {
  findById(id: string): Promise<Person | undefined>
  /** The people among `ids` that exist, in no particular order. */
  findByIds(ids: readonly string[]): Promise<Person[]>
  /** People ordered by id, at most `limit` of them. */
  list(query: ListPeopleQuery): Promise<PersonSummary[]>
  /**
   * The page list() gives, as JSON ready to send: a database can build it
   * for less than rows mapped to objects and serialized again. Optional, so
   * adapters written before it still fit: without it, the use case
   * serializes list()'s page itself.
   */
  listJson?(query: ListPeopleQuery): Promise<PersonSummariesJson>
  insert(person: Person): Promise<void>
  /**
   * Replaces a stored person's fields and version, in one conditional write,
   * when the stored version is still `expectedVersion`; false when it is not
   * (another write came first) or there is no such person.
   */
  update(person: Person, expectedVersion: number): Promise<boolean>
  /**
   * Removes a person together with their friendships and the messages sent
   * to them, and erases every stored idempotent answer about them
   * (IdempotentAnswer.subject) with the same final step, when there is one (of `expectedVersion`, when given); false
   * otherwise. Atomically, except that an adapter whose statements run on
   * the event loop may remove a person with very many messages or friends
   * a step at a time, letting other work run between steps: it checks
   * `expectedVersion` with the first step, then goes on to the end,
   * awaiting `beforeNextStep` before each step after the first. A rejection
   * stops it with that error, the person still there with fewer messages
   * or friends; deleting again finishes it. `events` are recorded in the
   * transaction that deletes the person's row, and only if it does.
   */
  delete(id: string, expectedVersion?: number, beforeNextStep?: () => Promise<void>, events?: readonly ChangeEvent[]): Promise<boolean>
}
