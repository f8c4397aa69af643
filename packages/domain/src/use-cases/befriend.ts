import { personNotFound } from '../errors.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'
import { checkNotSelf } from './require-people.js'

/**
 * Makes two people friends of each other; doing it twice changes nothing.
 * Oneself is refused first, as unfriend does: an id that is not well formed
 * names nobody, like any unknown id, and gets the same answer.
 */
export const befriend = ({ friendships, clock }: Pick<Ports, 'friendships' | 'clock'>) =>
  async (personId: string, friendId: string): Promise<void> => {
    checkNotSelf(personId, friendId)
    for (const id of [personId, friendId]) if (!isId(id)) throw personNotFound(id)
    await friendships.add(personId, friendId, clock.now())
  }
