import { changeEvents, subjects, type Actor } from '../change/change-event.js'
import { personNotFound } from '../errors.js'
import { checkVersion, editConflict, missingPerson, WRITE_ATTEMPTS, type VersionCondition } from '../person/person.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'

export interface DeletePersonOptions {
  /** Delete only the person at one of these versions (REST's `If-Match`). */
  condition?: VersionCondition | undefined
  /** Passed to the repository: PersonRepository.delete's beforeNextStep. */
  beforeNextStep?: (() => Promise<void>) | undefined
}

/**
 * Removes a person with their friendships and the messages sent to them.
 * Unconditionally, one call; with a `condition`, only the version read and
 * checked is deleted, so a change that slips in between is not lost. The
 * event commits with the deletion of the person's row (a deletion in steps
 * records it with its last step).
 */
export const deletePerson = ({ people, ids, clock }: Pick<Ports, 'people' | 'ids' | 'clock'>) =>
  async (actor: Actor, id: string, { condition, beforeNextStep }: DeletePersonOptions = {}): Promise<void> => {
    if (!isId(id)) throw missingPerson(id, condition)
    const events = [changeEvents({ ids, clock }, actor)('person.deleted', subjects.person(id), { id })]
    if (condition === undefined || condition.anyVersion === true) {
      if (!await people.delete(id, undefined, beforeNextStep, events)) throw missingPerson(id, condition)
      return
    }
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const current = await people.findById(id)
      if (current === undefined) throw personNotFound(id)
      checkVersion(current, condition)
      if (await people.delete(id, current.version, beforeNextStep, events)) return
    }
    throw editConflict(id)
  }
