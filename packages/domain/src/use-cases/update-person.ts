import { personNotFound } from '../errors.js'
import { applyPersonPatch, type Person, type PersonPatch } from '../person/person.js'
import type { Ports } from '../ports.js'
import { getPerson } from './get-person.js'

/** Fields left out keep their value; `null` clears an optional field. */
export const updatePerson = (ports: Pick<Ports, 'people' | 'clock'>) => {
  const get = getPerson(ports)
  return async (id: string, patch: PersonPatch): Promise<Person> => {
    const current = await get(id)
    const updated: Person = { ...current, ...applyPersonPatch(current, patch), updatedAt: ports.clock.now() }
    // The person may have been deleted between the read and the write.
    if (!await ports.people.update(updated)) throw personNotFound(id)
    return updated
  }
}
