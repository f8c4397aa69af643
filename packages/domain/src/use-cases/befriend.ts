import { changeEvents, subjects, type Actor } from '../change/change-event.js'
import { personNotFound } from '../errors.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'
import { checkNotSelf } from './require-people.js'

/**
 * Makes two people friends of each other; doing it twice changes nothing
 * and records nothing. Oneself is refused first, as unfriend does: an id
 * that is not well formed names nobody, like any unknown id, and gets the
 * same answer.
 */
export const befriend = (ports: Pick<Ports, 'unitOfWork' | 'clock' | 'ids'>) =>
  async (actor: Actor, personId: string, friendId: string): Promise<void> => {
    checkNotSelf(personId, friendId)
    for (const id of [personId, friendId]) if (!isId(id)) throw personNotFound(id)
    await ports.unitOfWork.run(async (tx) => {
      if (!await tx.friendships.add(personId, friendId, ports.clock.now())) return
      tx.changes.record(changeEvents(ports, actor)('friendship.created', subjects.friendship(personId, friendId), { personId, friendId }))
    })
  }
