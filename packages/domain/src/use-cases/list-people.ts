import type { PersonSummary } from '../person/person.js'
import type { PeoplePageQuery } from '../person/person-projection.js'
import type { ListPeopleQuery } from '../person/person.repository.js'
import { summariesJsonOf } from '../person/summaries-json.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'
import { cursorNotIssued, decodeCursor, encodeCursor, toPage, type Page } from '../shared/page.js'
import { isStorableText } from '../shared/text.js'
import { checkLimit, LIST_LIMITS } from './limits.js'

export interface ListPeopleInput {
  limit?: number
  cursor?: string
  name?: string
  /** Passed to the repository with a name filter: ListPeopleQuery.beforeNextRange. */
  beforeNextRange?: () => Promise<void>
}

const decodePeopleCursor = (cursor: string): string => {
  const [afterId = ''] = decodeCursor(cursor, 1)
  if (!isId(afterId)) throw cursorNotIssued()
  return afterId
}

/**
 * The cursor of the page that starts after this person: what `next` is when
 * the person ends a page, so a cursor made here and one from a page are one
 * kind (GraphQL's connection edges carry one each).
 */
export const cursorAfterPerson = (id: string): string => encodeCursor([id])

/** A page's limit and where it starts, checked: what every list of people takes. */
export const pageBounds = (input: Pick<ListPeopleInput, 'limit' | 'cursor'>): PeoplePageQuery => {
  const limit = checkLimit(input.limit ?? LIST_LIMITS.people.default, LIST_LIMITS.people.max)
  return input.cursor === undefined ? { limit } : { limit, afterId: decodePeopleCursor(input.cursor) }
}

/** The repository's query for a page; undefined when nothing can match. */
const pageQuery = (input: ListPeopleInput): ListPeopleQuery | undefined => {
  const bounds = pageBounds(input)
  // No stored name holds U+0000 or a lone surrogate (see checkStorableText):
  // nothing to ask the database, which would not agree (PostgreSQL's driver
  // sends a lone surrogate as U+FFFD, and matched names holding that).
  if (input.name !== undefined && !isStorableText(input.name)) return undefined
  return input.name ? { ...bounds, nameContains: input.name, beforeNextRange: input.beforeNextRange } : bounds
}

/** People ordered by id, a page at a time, optionally filtered by name. */
export const listPeople = ({ people }: Pick<Ports, 'people'>) =>
  async (input: ListPeopleInput = {}): Promise<Page<PersonSummary>> => {
    const query = pageQuery(input)
    if (query === undefined) return { items: [] }
    return pageOf(people, query)
  }

/** One row more than the page, to know whether another follows. */
const pageOf = async (people: Ports['people'], query: ListPeopleQuery): Promise<Page<PersonSummary>> =>
  toPage(await people.list({ ...query, limit: query.limit + 1 }), query.limit, (p) => [p.id])

/** listPeople's page as the JSON array of its items, for an answer that is that array. */
export const listPeopleJson = ({ people }: Pick<Ports, 'people'>) =>
  async (input: ListPeopleInput = {}): Promise<{ json: string, next?: string }> => {
    const query = pageQuery(input)
    if (query === undefined) return { json: '[]' }
    const { json, lastId, more } = await (people.listJson?.(query) ?? summariesJsonOf(people, query))
    return more && lastId !== undefined ? { json, next: cursorAfterPerson(lastId) } : { json }
  }
