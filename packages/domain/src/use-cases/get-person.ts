import { personNotFound } from '../errors.js'
import type { Person } from '../person/person.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'

export const getPerson = ({ people }: Pick<Ports, 'people'>) =>
  async (id: string): Promise<Person> => {
    const person = isId(id) ? await people.findById(id) : undefined
    if (person === undefined) throw personNotFound(id)
    return person
  }
