import { DomainError, personNotFound } from '../errors.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'

/** Throws PERSON_NOT_FOUND naming the first of `ids` that does not exist. */
export const requirePeople = async ({ people }: Pick<Ports, 'people'>, ids: readonly string[]): Promise<void> => {
  const wellFormed = ids.filter(isId)
  const found = new Set((await people.findByIds(wellFormed)).map((p) => p.id))
  const missing = ids.find((id) => !found.has(id))
  if (missing !== undefined) throw personNotFound(missing)
}

export const checkNotSelf = (personId: string, friendId: string): void => {
  if (personId === friendId) {
    throw new DomainError('SELF_FRIENDSHIP', 'a person cannot be their own friend', 'friendId')
  }
}
