import { validationError } from '../errors.js'

/**
 * PostgreSQL text cannot hold U+0000, so the service stores it nowhere,
 * whatever the database: the same input gets the same answer on every
 * store, and text holding it can match nothing stored.
 */
export const hasNul = (text: string): boolean => text.includes('\u0000')

export const checkNoNul = (field: string, text: string): string => {
  if (hasNul(text)) throw validationError(field, 'must not contain the character U+0000')
  return text
}
