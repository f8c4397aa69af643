import type { PersonSummary } from '../person/person.js'
import type { Ports } from '../ports.js'
import { decodeCursor, toPage, type Page } from '../shared/page.js'
import { checkLimit, LIST_LIMITS } from './limits.js'

export interface ListPeopleInput {
  limit?: number
  cursor?: string
  name?: string
}

/** People ordered by id, a page at a time, optionally filtered by name. */
export const listPeople = ({ people }: Pick<Ports, 'people'>) =>
  async (input: ListPeopleInput = {}): Promise<Page<PersonSummary>> => {
    const limit = checkLimit(input.limit ?? LIST_LIMITS.people.default, LIST_LIMITS.people.max)
    const [afterId] = input.cursor === undefined ? [] : decodeCursor(input.cursor, 1)
    const rows = await people.list({
      limit: limit + 1,
      ...(afterId === undefined ? {} : { afterId }),
      ...(input.name ? { nameContains: input.name } : {})
    })
    return toPage(rows, limit, (p) => [p.id])
  }
