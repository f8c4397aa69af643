import { checkPersonFields, type Person, type PersonInput } from '../person/person.js'
import type { Ports } from '../ports.js'

export const createPerson = ({ people, clock, ids }: Pick<Ports, 'people' | 'clock' | 'ids'>) =>
  async (input: PersonInput): Promise<Person> => {
    const fields = checkPersonFields(input)
    const now = clock.now()
    const person: Person = { id: ids.next(), ...fields, createdAt: now, updatedAt: now, version: 1 }
    await people.insert(person)
    return person
  }
