import type { ListPeopleQuery, PersonRepository, PersonSummariesJson } from './person.repository.js'

/**
 * The page list() gives, in the shape listJson() answers it: one person more
 * than the page tells whether another follows. What a repository without a
 * faster way of its own gives, and what the contract expects of one with it.
 */
export const summariesJsonOf = async (people: Pick<PersonRepository, 'list'>, query: ListPeopleQuery): Promise<PersonSummariesJson> => {
  const rows = await people.list({ ...query, limit: query.limit + 1 })
  const items = rows.slice(0, query.limit)
  const lastId = items.at(-1)?.id
  return { json: JSON.stringify(items), lastId, more: lastId !== undefined && rows.length > query.limit }
}
