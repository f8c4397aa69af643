import { changeEvents, personData, subjects, type Actor } from '../change/change-event.js'
import { isDomainError } from '../errors.js'
import {
  applyPersonPatch, checkPersonPatch, checkVersion, editConflict, missingPerson, WRITE_ATTEMPTS,
  type Person, type PersonFields, type PersonPatch, type VersionCondition
} from '../person/person.js'
import type { Ports } from '../ports.js'
import { getPerson } from './get-person.js'

const sameAddress = (a: Person['address'], b: Person['address']): boolean =>
  a === null || b === null ? a === b : a.street === b.street && a.city === b.city && a.country === b.country

const sameFields = (person: Person, fields: PersonFields): boolean =>
  person.name === fields.name && person.age === fields.age && person.email === fields.email && sameAddress(person.address, fields.address)

/**
 * Fields left out keep their value; `null` clears an optional field. An
 * invalid patch is VALIDATION_FAILED before the person is looked up, so an
 * unknown id with a bad body is a 400 through REST and GraphQL alike.
 *
 * The write holds only if the person is still at the version read (one
 * conditional UPDATE), so two concurrent patches never overwrite each other:
 * the loser reads again and applies its patch to the winner's result, or,
 * when it named a version (`condition`), fails with PRECONDITION_FAILED.
 *
 * A patch that changes nothing writes nothing: the person keeps its
 * version, ETag and updatedAt, and no event is recorded.
 */
export const updatePerson = (ports: Pick<Ports, 'people' | 'clock' | 'ids' | 'unitOfWork'>) => {
  const get = getPerson(ports)
  return async (actor: Actor, id: string, patch: PersonPatch, condition?: VersionCondition): Promise<Person> => {
    checkPersonPatch(patch)
    const event = changeEvents(ports, actor)
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const current = await get(id).catch((error: unknown) => {
        throw isDomainError(error) && error.code === 'PERSON_NOT_FOUND' ? missingPerson(id, condition) : error
      })
      checkVersion(current, condition)
      const fields = applyPersonPatch(current, patch)
      if (sameFields(current, fields)) return current
      const updated: Person = { ...current, ...fields, updatedAt: ports.clock.now(), version: current.version + 1 }
      const written = await ports.unitOfWork.run(async (tx) => {
        if (!await tx.people.update(updated, current.version)) return false
        tx.changes.record(event('person.updated', subjects.person(id), personData(updated)))
        return true
      })
      if (written) return updated
    }
    throw editConflict(id)
  }
}
