import type { CursorPage, Message, Person, PersonSummary, UseCases } from '@people-service/domain'
import DataLoader from 'dataloader'
import { CHUNK_ROWS, inChunks } from '../turns.js'

/** A person as resolvers see them: whole, or the id and name a list carries. */
export type PersonParent = Person | PersonSummary

/** The page of someone the batch did not find: nobody's list is empty. */
const EMPTY_PAGE: CursorPage<never> = Object.freeze({ items: [], cursors: [] })

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
  readonly #friendPages = new Map<number, DataLoader<string, CursorPage<PersonSummary>>>()
  readonly #inboxPages = new Map<number, DataLoader<string, CursorPage<Message>>>()

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
    return this.#listOf(this.#friends, limit, limit, [], (ids) => this.#useCases.listFriendsOfMany(ids, limit))
  }

  /** The newest `limit` messages to each person asked for. */
  inbox (limit: number): DataLoader<string, Message[]> {
    return this.#listOf(this.#inboxes, limit, limit, [], (ids) => this.#useCases.listInboxOfMany(ids, limit))
  }

  /** The first page of `limit` friends of each person asked for, with its cursors (one row more is read, to know whether more follow). */
  friendPages (limit: number): DataLoader<string, CursorPage<PersonSummary>> {
    return this.#listOf(this.#friendPages, limit, limit + 1, EMPTY_PAGE, (ids) => this.#useCases.pageFriendsOfMany(ids, limit))
  }

  /** The first page of the `limit` newest messages to each person asked for, with its cursors. */
  inboxPages (limit: number): DataLoader<string, CursorPage<Message>> {
    return this.#listOf(this.#inboxPages, limit, limit + 1, EMPTY_PAGE, (ids) => this.#useCases.pageInboxOfMany(ids, limit))
  }

  #listOf<V> (loaders: Map<number, DataLoader<string, V>>, limit: number, rowsPerParent: number, missing: V, loadMany: (ids: readonly string[]) => Promise<Map<string, V>>): DataLoader<string, V> {
    let loader = loaders.get(limit)
    if (loader === undefined) {
      // Each chunk of parents reads at most CHUNK_ROWS rows.
      const parentsPerChunk = Math.max(1, Math.floor(CHUNK_ROWS / Math.max(1, rowsPerParent)))
      loader = batching((ids) => inChunks(ids, parentsPerChunk, loadMany), missing)
      loaders.set(limit, loader)
    }
    return loader
  }
}
