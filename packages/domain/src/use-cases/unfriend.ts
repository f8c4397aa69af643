import type { Ports } from '../ports.js'
import { checkNotSelf, requirePeople } from './require-people.js'

/** Ends a friendship in both directions; ending one that does not exist is fine. */
export const unfriend = (ports: Pick<Ports, 'people' | 'friendships'>) =>
  async (personId: string, friendId: string): Promise<void> => {
    checkNotSelf(personId, friendId)
    await requirePeople(ports, [personId, friendId])
    await ports.friendships.remove(personId, friendId)
  }
