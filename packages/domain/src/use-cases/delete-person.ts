import { personNotFound } from '../errors.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'

/** Removes a person with their friendships and the messages sent to them. */
export const deletePerson = ({ people }: Pick<Ports, 'people'>) =>
  async (id: string): Promise<void> => {
    if (!isId(id) || !await people.delete(id)) throw personNotFound(id)
  }
