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

// C0 and C1 controls (U+0000–U+001F, U+007F–U+009F): ANSI escapes, bells, backspaces.
const CONTROL = /\p{Cc}/u
// Controls but newline and tab: what a message may not hold.
const CONTROL_BUT_LINES = /[^\P{Cc}\n\t]/u
// Bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069): text that reads backwards.
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/u
// A character that shows: not white space, a control, a format character
// (zero-width space and joiners), a mark on its own, or a blank that
// renders as nothing (Hangul fillers, the Braille blank).
const VISIBLE = /[^\p{White_Space}\p{Cc}\p{Cf}\p{M}\u115F\u1160\u3164\uFFA0\u2800]/u

/**
 * A name people read (a person's, an API key's): stored NFC-normalized, so
 * the same name typed composed or decomposed is one name and one search
 * result; no control or bidirectional-override character, and at least one
 * visible character. Answers the NFC form.
 */
export const checkDisplayName = (field: string, name: string): string => {
  checkStorableText(field, name)
  const normalized = name.normalize('NFC')
  if (CONTROL.test(normalized)) throw validationError(field, 'must not contain control characters')
  if (BIDI_CONTROL.test(normalized)) throw validationError(field, 'must not contain bidirectional override characters (U+202A–U+202E, U+2066–U+2069)')
  if (!VISIBLE.test(normalized)) throw validationError(field, 'must have a visible character')
  return normalized
}

/** Text of several lines (a message): no control character but newline and tab. */
export const checkLinesText = (field: string, text: string): string => {
  checkStorableText(field, text)
  if (CONTROL_BUT_LINES.test(text)) throw validationError(field, 'must not contain control characters other than newline and tab')
  return text
}
