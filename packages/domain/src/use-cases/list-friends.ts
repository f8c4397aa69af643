import type { PersonSummary } from '../person/person.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'
import { getPerson } from './get-person.js'
import { checkLimit, LIST_LIMITS } from './limits.js'

export const listFriends = (ports: Pick<Ports, 'people' | 'friendships'>) => {
  const get = getPerson(ports)
  return async (personId: string, limit: number = LIST_LIMITS.friends.default): Promise<PersonSummary[]> => {
    checkLimit(limit, LIST_LIMITS.friends.max)
    // A malformed id names nobody: no query (PostgreSQL would refuse one
    // holding U+0000), and the second look answers PERSON_NOT_FOUND.
    const friends = limit === 0 || !isId(personId) ? [] : await ports.friendships.listFriends(personId, limit)
    // Someone with friends exists; only an empty answer needs the second look.
    if (friends.length === 0) await get(personId)
    return friends
  }
}
