import { personNotFound } from '../errors.js'
import { applyPersonPatch, checkPersonPatch, type Person, type PersonPatch } from '../person/person.js'
import type { Ports } from '../ports.js'
import { getPerson } from './get-person.js'

/**
 * Fields left out keep their value; `null` clears an optional field. An
 * invalid patch is VALIDATION_FAILED before the person is looked up, so an
 * unknown id with a bad body is a 400 through REST and GraphQL alike.
 */
export const updatePerson = (ports: Pick<Ports, 'people' | 'clock'>) => {
  const get = getPerson(ports)
  return async (id: string, patch: PersonPatch): Promise<Person> => {
    checkPersonPatch(patch)
    const current = await get(id)
    const updated: Person = { ...current, ...applyPersonPatch(current, patch), updatedAt: ports.clock.now() }
    // The person may have been deleted between the read and the write.
    if (!await ports.people.update(updated)) throw personNotFound(id)
    return updated
  }
}
