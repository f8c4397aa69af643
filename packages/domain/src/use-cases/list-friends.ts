import type { FriendEntry } from '../friendship/friendship.repository.js'
import type { PersonSummary } from '../person/person.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'
import { cursorNotIssued, decodeListCursor, listKey, toCursorPage, type CursorPage } from '../shared/page.js'
import { getPerson } from './get-person.js'
import { checkLimit, LIST_LIMITS } from './limits.js'

export interface ListFriendsInput {
  limit?: number
  cursor?: string
}

/** One person's list of friends: another's cursor names no place in it. */
const friendsList = (personId: string): string => `friends:${personId}`

// A position as a cursor holds it: a decimal integer a store can compare.
const POSITION = /^(0|[1-9]\d{0,14})$/

const decodeFriendsCursor = (cursor: string, personId: string): number => {
  const [position = ''] = decodeListCursor(cursor, friendsList(personId), 1)
  if (!POSITION.test(position)) throw cursorNotIssued()
  return Number(position)
}

/** `limit + 1` entries of a person's friends as a page of them, each with the cursor that resumes after them. */
export const friendsPage = (personId: string, entries: FriendEntry[], limit: number): CursorPage<PersonSummary> => {
  const list = friendsList(personId)
  const page = toCursorPage(entries, limit, (entry) => listKey(list, String(entry.position)))
  return { ...page, items: page.items.map((entry) => entry.friend) }
}

/** The friends of a person in the order they were stored, a page at a time. */
export const listFriends = (ports: Pick<Ports, 'people' | 'friendships'>) => {
  const get = getPerson(ports)
  return async (personId: string, input: ListFriendsInput = {}): Promise<CursorPage<PersonSummary>> => {
    const limit = checkLimit(input.limit ?? LIST_LIMITS.friends.default, LIST_LIMITS.friends.max)
    const after = input.cursor === undefined ? undefined : decodeFriendsCursor(input.cursor, personId)
    // A malformed id names nobody: no query (PostgreSQL would refuse one
    // holding U+0000), and the second look answers PERSON_NOT_FOUND.
    const entries = limit === 0 || !isId(personId)
      ? []
      : await ports.friendships.pageFriends(personId, { limit: limit + 1, ...(after === undefined ? {} : { after }) })
    // Someone with friends exists; only an empty answer needs the second look.
    if (entries.length === 0) await get(personId)
    return friendsPage(personId, entries, limit)
  }
}
