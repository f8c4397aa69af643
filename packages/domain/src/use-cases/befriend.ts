import { personNotFound } from '../errors.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'
import { checkNotSelf } from './require-people.js'

/** Makes two people friends of each other; doing it twice changes nothing. */
export const befriend = ({ friendships, clock }: Pick<Ports, 'friendships' | 'clock'>) =>
  async (personId: string, friendId: string): Promise<void> => {
    for (const id of [personId, friendId]) if (!isId(id)) throw personNotFound(id)
    checkNotSelf(personId, friendId)
    await friendships.add(personId, friendId, clock.now())
  }
