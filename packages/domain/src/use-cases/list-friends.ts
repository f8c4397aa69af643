import type { PersonSummary } from '../person/person.js'
import type { Ports } from '../ports.js'
import { getPerson } from './get-person.js'
import { checkLimit, LIST_LIMITS } from './limits.js'

export const listFriends = (ports: Pick<Ports, 'people' | 'friendships'>) => {
  const get = getPerson(ports)
  return async (personId: string, limit: number = LIST_LIMITS.friends.default): Promise<PersonSummary[]> => {
    checkLimit(limit, LIST_LIMITS.friends.max)
    const friends = limit === 0 ? [] : await ports.friendships.listFriends(personId, limit)
    // Someone with friends exists; only an empty answer needs the second look.
    if (friends.length === 0) await get(personId)
    return friends
  }
}
