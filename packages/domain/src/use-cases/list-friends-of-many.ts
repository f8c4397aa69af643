import type { FriendEntry } from '../friendship/friendship.repository.js'
import type { PersonSummary } from '../person/person.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'
import type { CursorPage } from '../shared/page.js'
import { friendsPage } from './list-friends.js'
import { checkLimit, LIST_LIMITS } from './limits.js'

/**
 * The friends of many people in one round trip, at most `limit` each, in id
 * order. Every asked id gets an entry; someone unknown simply has no friends,
 * because the batch serves people the caller already holds.
 */
export const listFriendsOfMany = ({ friendships }: Pick<Ports, 'friendships'>) =>
  async (personIds: readonly string[], limit: number = LIST_LIMITS.friends.default): Promise<Map<string, PersonSummary[]>> => {
    checkLimit(limit, LIST_LIMITS.friends.max)
    const wanted = [...new Set(personIds)].filter(isId)
    const found = limit === 0 || wanted.length === 0 ? new Map<string, PersonSummary[]>() : await friendships.listFriendsOfMany(wanted, limit)
    return new Map(personIds.map((id) => [id, found.get(id) ?? []]))
  }

/**
 * The first page of many people's friends in one round trip, as listFriends
 * gives it to each (the same cursors), for people the caller already holds.
 */
export const pageFriendsOfMany = ({ friendships }: Pick<Ports, 'friendships'>) =>
  async (personIds: readonly string[], limit: number = LIST_LIMITS.friends.default): Promise<Map<string, CursorPage<PersonSummary>>> => {
    checkLimit(limit, LIST_LIMITS.friends.max)
    const wanted = [...new Set(personIds)].filter(isId)
    const found = limit === 0 || wanted.length === 0 ? new Map<string, FriendEntry[]>() : await friendships.pageFriendsOfMany(wanted, limit + 1)
    return new Map(personIds.map((id) => [id, friendsPage(id, found.get(id) ?? [], limit)]))
  }
