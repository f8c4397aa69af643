import type { PersonSummary } from '../person/person.js'

/**
 * A friend and their place in a list of friends: the store's creation
 * sequence, which orders the list. A cursor keeps it, so a page resumes
 * after the last friend served even when that friend is gone since.
 */
export interface FriendEntry {
  friend: PersonSummary
  position: number
}

/** A page of one person's friends: at most `limit`, from after `after` (a position) when given. */
export interface FriendsQuery {
  limit: number
  after?: number
}

/**
 * Port: friendships. A friendship is mutual, so adapters store and remove
 * both directions at once; a half-written friendship must never be visible.
 */
export interface FriendshipRepository {
  /** Idempotent: true when the friendship is new. Throws PERSON_NOT_FOUND when either person does not exist. */
  add(personId: string, friendId: string, since: Date): Promise<boolean>
  /** Idempotent: true when there was a friendship to end. */
  remove(personId: string, friendId: string): Promise<boolean>
  /**
   * Friends of one person in creation order (the order of their ids, which
   * are time-ordered; a store may keep its own creation sequence), at most `limit`.
   */
  listFriends(personId: string, limit: number): Promise<PersonSummary[]>
  /** Friends of many people in one round trip, at most `limit` each. */
  listFriendsOfMany(personIds: readonly string[], limit: number): Promise<Map<string, PersonSummary[]>>
  /** listFriends a page at a time: each friend with their position, those after `after` only. */
  pageFriends(personId: string, query: FriendsQuery): Promise<FriendEntry[]>
  /** listFriendsOfMany with each friend's position: the first page of many lists in one round trip. */
  pageFriendsOfMany(personIds: readonly string[], limit: number): Promise<Map<string, FriendEntry[]>>
}
