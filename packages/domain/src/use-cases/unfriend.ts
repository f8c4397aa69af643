import { changeEvents, subjects, type Actor } from '../change/change-event.js'
import type { Ports } from '../ports.js'
import { checkNotSelf, requirePeople } from './require-people.js'

/** Ends a friendship in both directions; ending one that does not exist is fine, and records nothing. */
export const unfriend = (ports: Pick<Ports, 'people' | 'unitOfWork' | 'clock' | 'ids'>) =>
  async (actor: Actor, personId: string, friendId: string): Promise<void> => {
    checkNotSelf(personId, friendId)
    await requirePeople(ports, [personId, friendId])
    await ports.unitOfWork.run(async (tx) => {
      if (!await tx.friendships.remove(personId, friendId)) return
      tx.changes.record(changeEvents(ports, actor)('friendship.deleted', subjects.friendship(personId, friendId), { personId, friendId }))
    })
  }
