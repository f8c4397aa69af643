import type { PersonSummary } from '../person/person.js'

/**
 * Port: friendships. A friendship is mutual, so adapters store and remove
 * both directions at once; a half-written friendship must never be visible.
 */
export interface FriendshipRepository {
  /** Idempotent. Throws PERSON_NOT_FOUND when either person does not exist. */
  add(personId: string, friendId: string, since: Date): Promise<void>
  /** Idempotent. */
  remove(personId: string, friendId: string): Promise<void>
  /**
   * Friends of one person in creation order (the order of their ids, which
   * are time-ordered; a store may keep its own creation sequence), at most `limit`.
   */
  listFriends(personId: string, limit: number): Promise<PersonSummary[]>
  /** Friends of many people in one round trip, at most `limit` each. */
  listFriendsOfMany(personIds: readonly string[], limit: number): Promise<Map<string, PersonSummary[]>>
}
