import type { FriendshipRepository } from '../friendship/friendship.repository.js'
import type { Person } from './person.js'
import type { PersonProjections, PersonSelection } from './person-projection.js'
import type { PersonRepository } from './person.repository.js'

/**
 * Projections over the plain repositories: each person read whole, each
 * friend list read on its own, the JSON made by JSON.stringify. The reference
 * every database's own projections must equal, byte for byte; slow, and meant
 * for the in-memory adapters and tests.
 */
export const referenceProjections = ({ people, friendships }: { people: PersonRepository, friendships: FriendshipRepository }): PersonProjections => {
  const shape = async (person: Person, selection: PersonSelection): Promise<Record<string, unknown>> => {
    const shaped: Record<string, unknown> = {}
    for (const entry of selection) {
      switch (entry.kind) {
        case 'field':
          shaped[entry.key] = person[entry.field]
          break
        case 'constant':
          shaped[entry.key] = entry.value
          break
        case 'address': {
          const { address } = person
          shaped[entry.key] = address === null
            ? null
            : Object.fromEntries(entry.selection.map((field) => [field.key, field.kind === 'constant' ? field.value : address[field.field]]))
          break
        }
        case 'friends': {
          const friends = entry.limit === 0 ? [] : await friendships.listFriends(person.id, entry.limit)
          const whole = await people.findByIds(friends.map((friend) => friend.id))
          const byId = new Map(whole.map((friend) => [friend.id, friend]))
          const list: Array<Record<string, unknown>> = []
          for (const friend of friends) {
            const found = byId.get(friend.id)
            if (found !== undefined) list.push(await shape(found, entry.selection))
          }
          shaped[entry.key] = list
          break
        }
      }
    }
    return shaped
  }

  return {
    async findJson (id, selection) {
      const person = await people.findById(id)
      return person === undefined ? undefined : JSON.stringify(await shape(person, selection))
    },
    async listJson (query, selection) {
      const page = await people.list(query)
      const whole = new Map((await people.findByIds(page.map((person) => person.id))).map((person) => [person.id, person]))
      const list: Array<Record<string, unknown>> = []
      for (const { id } of page) {
        const person = whole.get(id)
        if (person !== undefined) list.push(await shape(person, selection))
      }
      return JSON.stringify(list)
    }
  }
}
