import { validationError } from '../errors.js'

/*
 * Text as the contract counts it: in characters (code points). A lone
 * surrogate is half of one; no database stores it as given (UTF-8 cannot
 * encode it), so text holding one is refused rather than silently changed.
 */

const LONE_SURROGATE = /\p{Cs}/u

/** True when every UTF-16 surrogate in `value` is one half of a pair. */
export const isWellFormedText = (value: string): boolean => !LONE_SURROGATE.test(value)

/** The length in characters (code points), not UTF-16 units or bytes. */
export const characterCount = (value: string): number => [...value].length

/**
 * PostgreSQL text cannot hold U+0000, so the service stores it nowhere,
 * whatever the database: the same input gets the same answer on every
 * store, and text holding it can match nothing stored.
 */
export const hasNul = (text: string): boolean => text.includes('\u0000')

/** Whether a store could hold `text` as it is: what no stored text can match when false. */
export const isStorableText = (text: string): boolean => isWellFormedText(text) && !hasNul(text)

/**
 * Text every store keeps exactly as sent: no lone surrogate, no U+0000.
 * Every stored text field passes through here; 400 naming the field otherwise.
 */
export const checkStorableText = (field: string, text: string): string => {
  if (!isWellFormedText(text)) throw validationError(field, 'must be well-formed Unicode text (a lone surrogate is no character)')
  if (hasNul(text)) throw validationError(field, 'must not contain the character U+0000')
  return text
}
