import { isDomainError } from '../errors.js'
import {
  applyPersonPatch, checkPersonPatch, checkVersion, editConflict, missingPerson, WRITE_ATTEMPTS,
  type Person, type PersonPatch, type VersionCondition
} from '../person/person.js'
import type { Ports } from '../ports.js'
import { getPerson } from './get-person.js'

/**
 * Fields left out keep their value; `null` clears an optional field. An
 * invalid patch is VALIDATION_FAILED before the person is looked up, so an
 * unknown id with a bad body is a 400 through REST and GraphQL alike.
 *
 * The write holds only if the person is still at the version read (one
 * conditional UPDATE), so two concurrent patches never overwrite each other:
 * the loser reads again and applies its patch to the winner's result, or,
 * when it named a version (`condition`), fails with PRECONDITION_FAILED.
 */
export const updatePerson = (ports: Pick<Ports, 'people' | 'clock'>) => {
  const get = getPerson(ports)
  return async (id: string, patch: PersonPatch, condition?: VersionCondition): Promise<Person> => {
    checkPersonPatch(patch)
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const current = await get(id).catch((error: unknown) => {
        throw isDomainError(error) && error.code === 'PERSON_NOT_FOUND' ? missingPerson(id, condition) : error
      })
      checkVersion(current, condition)
      const updated: Person = {
        ...current,
        ...applyPersonPatch(current, patch),
        updatedAt: ports.clock.now(),
        version: current.version + 1
      }
      if (await ports.people.update(updated, current.version)) return updated
    }
    throw editConflict(id)
  }
}
