import type { Person } from '../person/person.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'

/**
 * Many people by id in one round trip, for adapters that resolve references
 * in batches (GraphQL loaders). Ids that name nobody are simply absent from
 * the map: whether that is an error is the caller's call.
 */
export const getPeopleByIds = ({ people }: Pick<Ports, 'people'>) =>
  async (ids: readonly string[]): Promise<Map<string, Person>> => {
    const wanted = [...new Set(ids)].filter(isId)
    const found = wanted.length === 0 ? [] : await people.findByIds(wanted)
    return new Map(found.map((person) => [person.id, person]))
  }
