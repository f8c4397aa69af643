import { changeEvents, personData, subjects, type Actor } from '../change/change-event.js'
import { checkPersonFields, type Person, type PersonInput } from '../person/person.js'
import type { Ports } from '../ports.js'
import type { TransactionPorts } from '../shared/unit-of-work.js'

type CreatePorts = Pick<Ports, 'clock' | 'ids'>

/** Checks and stores a person with its event, inside a unit of work the caller runs. */
export const storePerson = (ports: CreatePorts) =>
  async (tx: Pick<TransactionPorts, 'people' | 'changes'>, actor: Actor, input: PersonInput): Promise<Person> => {
    const fields = checkPersonFields(input)
    const now = ports.clock.now()
    const person: Person = { id: ports.ids.next(), ...fields, createdAt: now, updatedAt: now, version: 1 }
    await tx.people.insert(person)
    tx.changes.record(changeEvents(ports, actor)('person.created', subjects.person(person.id), personData(person)))
    return person
  }

export const createPerson = (ports: CreatePorts & Pick<Ports, 'unitOfWork'>) => {
  const store = storePerson(ports)
  return async (actor: Actor, input: PersonInput): Promise<Person> =>
    ports.unitOfWork.run((tx) => store(tx, actor, input))
}
