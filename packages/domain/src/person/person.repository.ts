import type { Person, PersonSummary } from './person.js'

export interface ListPeopleQuery {
  limit: number
  /** Only people whose id sorts after this one (keyset pagination). */
  afterId?: string
  /** Case-insensitive substring of the name. */
  nameContains?: string
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
  insert(person: Person): Promise<void>
  /**
   * Replaces a stored person's fields and version, in one conditional write,
   * when the stored version is still `expectedVersion`; false when it is not
   * (another write came first) or there is no such person.
   */
  update(person: Person, expectedVersion: number): Promise<boolean>
  /**
   * Removes a person together with their friendships and the messages sent
   * to them, atomically, when there is one (of `expectedVersion`, when
   * given); false otherwise.
   */
  delete(id: string, expectedVersion?: number): Promise<boolean>
}
