import { personNotFound, type Message, type Person, type PersonSummary, type UseCases } from '@people-service/domain'
import type { MercuriusLoaders } from 'mercurius'
import type { GraphQLContext } from './context.js'
import { LIST_ARGUMENTS } from './argument-limits.js'
import type { LimitArgs } from './schema.js'
import { CHUNK_ROWS, inChunks } from './turns.js'

/** A person as resolvers see them: whole, or the id and name a list carries. */
export type PersonParent = Person | PersonSummary

interface Query<T> { obj: T, params: LimitArgs }

/**
 * Queries for one field, grouped by their limit: aliases may ask for the same
 * list with different limits, and each distinct limit is one batch.
 */
const byLimit = <T>(queries: Array<Query<T>>, fallback: number): Map<number, T[]> => {
  const groups = new Map<number, T[]>()
  for (const { obj, params } of queries) {
    const limit = params.limit ?? fallback
    groups.set(limit, [...groups.get(limit) ?? [], obj])
  }
  return groups
}

/**
 * Loads a list field for every parent of one level at once: one use-case
 * call (one statement) per distinct limit, whatever the number of parents;
 * a batch of more than CHUNK_ROWS rows is read in chunks that take turns
 * (turns.ts).
 */
const batchedList = <T>(fallback: number, loadMany: (ids: readonly string[], limit: number) => Promise<Map<string, T[]>>) =>
  async (queries: Array<Query<PersonParent>>): Promise<T[][]> => {
    const loaded = new Map<number, Map<string, T[]>>()
    await Promise.all([...byLimit(queries, fallback)].map(async ([limit, parents]) => {
      const parentsPerChunk = Math.max(1, Math.floor(CHUNK_ROWS / Math.max(1, limit)))
      loaded.set(limit, await inChunks(parents.map((p) => p.id), parentsPerChunk, (ids) => loadMany(ids, limit)))
    }))
    return queries.map(({ obj, params }) => loaded.get(params.limit ?? fallback)?.get(obj.id) ?? [])
  }

/** Mercurius loaders for every list-valued or parent-dependent field. */
export const createLoaders = (useCases: UseCases): MercuriusLoaders<GraphQLContext> => ({
  Person: {
    friends: batchedList(LIST_ARGUMENTS['Person.friends'].default, (ids, limit) => useCases.listFriendsOfMany(ids, limit)),
    messages: batchedList(LIST_ARGUMENTS['Person.messages'].default, (ids, limit) => useCases.listInboxOfMany(ids, limit))
  },
  Message: {
    async person (queries: Array<Query<Message>>): Promise<Array<Person | Error>> {
      const found = await inChunks(queries.map(({ obj }) => obj.personId), CHUNK_ROWS, (ids) => useCases.getPeopleByIds(ids))
      // A message outlives its recipient only between a delete and its cascade.
      return queries.map(({ obj }) => found.get(obj.personId) ?? personNotFound(obj.personId))
    }
  }
})
