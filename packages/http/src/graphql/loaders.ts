import type { Message, Person, PersonSummary, UseCases } from '@people-service/domain'
import DataLoader from 'dataloader'
import { CHUNK_ROWS, inChunks } from '../turns.js'

/** A person as resolvers see them: whole, or the id and name a list carries. */
export type PersonParent = Person | PersonSummary

/**
 * Loads every key asked for in one turn at once (DataLoader batches one tick).
 * No cache: a subscription's loaders live as long as its connection, and a
 * row read there must not be served stale to a later event; a key asked for
 * twice in one batch is read once all the same.
 */
const batching = <V>(load: (keys: readonly string[]) => Promise<Map<string, V>>, missing: V): DataLoader<string, V> =>
  new DataLoader(async (keys) => {
    const found = await load([...new Set(keys)])
    return keys.map((key) => found.get(key) ?? missing)
  }, { cache: false })

/**
 * The batch loads of one request (or one subscription's connection), keyed
 * by id and list limit: one statement per level of a query, whatever the
 * number of people — per distinct limit, when aliases ask for several — and
 * a level of more than CHUNK_ROWS rows in chunks that take turns (turns.ts).
 * Made lazily: most queries need one or two of them.
 */
export class Loaders {
  readonly #useCases: UseCases
  #people: DataLoader<string, Person | null> | undefined
  readonly #friends = new Map<number, DataLoader<string, PersonSummary[]>>()
  readonly #inboxes = new Map<number, DataLoader<string, Message[]>>()

  constructor (useCases: UseCases) {
    this.#useCases = useCases
  }

  /**
   * Whole people by id. Lists of friends carry only id and name; a query
   * asking for their age or address fills the rest from here, one statement
   * for the whole level rather than one per person.
   */
  get people (): DataLoader<string, Person | null> {
    this.#people ??= batching((ids) => inChunks(ids, CHUNK_ROWS, (chunk) => this.#useCases.getPeopleByIds(chunk)), null)
    return this.#people
  }

  /** The first `limit` friends of each person asked for. */
  friends (limit: number): DataLoader<string, PersonSummary[]> {
    return this.#listOf(this.#friends, limit, (ids) => this.#useCases.listFriendsOfMany(ids, limit))
  }

  /** The newest `limit` messages to each person asked for. */
  inbox (limit: number): DataLoader<string, Message[]> {
    return this.#listOf(this.#inboxes, limit, (ids) => this.#useCases.listInboxOfMany(ids, limit))
  }

  #listOf<T> (loaders: Map<number, DataLoader<string, T[]>>, limit: number, loadMany: (ids: readonly string[]) => Promise<Map<string, T[]>>): DataLoader<string, T[]> {
    let loader = loaders.get(limit)
    if (loader === undefined) {
      // Each chunk of parents reads at most CHUNK_ROWS rows.
      const parentsPerChunk = Math.max(1, Math.floor(CHUNK_ROWS / Math.max(1, limit)))
      loader = batching((ids) => inChunks(ids, parentsPerChunk, loadMany), [])
      loaders.set(limit, loader)
    }
    return loader
  }
}
