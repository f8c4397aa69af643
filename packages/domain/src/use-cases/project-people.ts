import type { PersonSelection } from '../person/person-projection.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'
import { checkLimit, LIST_LIMITS } from './limits.js'
import { pageBounds, type ListPeopleInput } from './list-people.js'

/** Every friend list of a selection within the limit getPerson's friends have, at any depth. */
const checkSelection = (selection: PersonSelection): void => {
  for (const entry of selection) {
    if (entry.kind === 'friends') {
      checkLimit(entry.limit, LIST_LIMITS.friends.max, 'friends.limit')
      checkSelection(entry.selection)
    }
  }
}

/**
 * The person with this id as JSON shaped by `selection`, or undefined when
 * nobody has it: the answer getPerson and listFriends give, built by the
 * store in one go.
 */
export const projectPerson = ({ projections }: Pick<Ports, 'projections'>) =>
  async (id: string, selection: PersonSelection): Promise<string | undefined> => {
    checkSelection(selection)
    return isId(id) ? projections.findJson(id, selection) : undefined
  }

/** A page's limit and cursor, as listPeople takes them (no name filter). */
export type ProjectPeopleInput = Pick<ListPeopleInput, 'limit' | 'cursor'>

/**
 * A page of people (the items of listPeople without a name filter) as a
 * JSON array shaped by `selection`. Refuses a limit or cursor as listPeople
 * does.
 */
export const projectPeople = ({ projections }: Pick<Ports, 'projections'>) =>
  async (input: ProjectPeopleInput, selection: PersonSelection): Promise<string> => {
    const bounds = pageBounds(input)
    checkSelection(selection)
    return projections.listJson(bounds, selection)
  }
