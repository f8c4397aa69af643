import { personNotFound, type Message, type Person, type PersonSummary, type UseCases } from '@people-service/domain'
import type { MercuriusLoaders } from 'mercurius'
import type { GraphQLContext } from './context.js'
import { LIST_ARGUMENTS } from './limits.js'
import type { LimitArgs } from './schema.js'

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
 * call (one statement) per distinct limit, whatever the number of parents.
 */
const batchedList = <T>(fallback: number, loadMany: (ids: string[], limit: number) => Promise<Map<string, T[]>>) =>
  async (queries: Array<Query<PersonParent>>): Promise<T[][]> => {
    const loaded = new Map<number, Map<string, T[]>>()
    await Promise.all([...byLimit(queries, fallback)].map(async ([limit, parents]) => {
      loaded.set(limit, await loadMany(parents.map((p) => p.id), limit))
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
      const found = await useCases.getPeopleByIds(queries.map(({ obj }) => obj.personId))
      // A message outlives its recipient only between a delete and its cascade.
      return queries.map(({ obj }) => found.get(obj.personId) ?? personNotFound(obj.personId))
    }
  }
})
