import { personNotFound } from '../errors.js'
import { checkVersion, editConflict, WRITE_ATTEMPTS, type VersionCondition } from '../person/person.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'

/**
 * Removes a person with their friendships and the messages sent to them.
 * Unconditionally, one statement; with a `condition`, only the version read
 * and checked is deleted, so a change that slips in between is not lost.
 */
export const deletePerson = ({ people }: Pick<Ports, 'people'>) =>
  async (id: string, condition?: VersionCondition): Promise<void> => {
    if (!isId(id)) throw personNotFound(id)
    if (condition === undefined) {
      if (!await people.delete(id)) throw personNotFound(id)
      return
    }
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const current = await people.findById(id)
      if (current === undefined) throw personNotFound(id)
      checkVersion(current, condition)
      if (await people.delete(id, current.version)) return
    }
    throw editConflict(id)
  }
