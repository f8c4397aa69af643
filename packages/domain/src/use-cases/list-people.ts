import { DomainError } from '../errors.js'
import type { PersonSummary } from '../person/person.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'
import { decodeCursor, encodeCursor, toPage, type Page } from '../shared/page.js'
import { hasNul } from '../shared/text.js'
import { checkLimit, LIST_LIMITS } from './limits.js'

export interface ListPeopleInput {
  limit?: number
  cursor?: string
  name?: string
}

export const decodePeopleCursor = (cursor: string): string => {
  const [afterId = ''] = decodeCursor(cursor, 1)
  if (!isId(afterId)) throw new DomainError('INVALID_CURSOR', 'cursor is not one this service issued', 'cursor')
  return afterId
}

/**
 * The cursor of the page that starts after this person: what `next` is when
 * the person ends a page, so a cursor made here and one from a page are one
 * kind (GraphQL's connection edges carry one each).
 */
export const cursorAfterPerson = (id: string): string => encodeCursor([id])

/** People ordered by id, a page at a time, optionally filtered by name. */
export const listPeople = ({ people }: Pick<Ports, 'people'>) =>
  async (input: ListPeopleInput = {}): Promise<Page<PersonSummary>> => {
    const limit = checkLimit(input.limit ?? LIST_LIMITS.people.default, LIST_LIMITS.people.max)
    const afterId = input.cursor === undefined ? undefined : decodePeopleCursor(input.cursor)
    // No stored name holds U+0000 (see hasNul): nothing to ask the database.
    if (input.name !== undefined && hasNul(input.name)) return { items: [] }
    const rows = await people.list({
      limit: limit + 1,
      ...(afterId === undefined ? {} : { afterId }),
      ...(input.name ? { nameContains: input.name } : {})
    })
    return toPage(rows, limit, (p) => [p.id])
  }
