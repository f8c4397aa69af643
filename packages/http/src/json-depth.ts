/**
 * Nesting a JSON text may have, wherever the service reads one (bodies,
 * WebSocket messages): the API's deepest is a person's address (2), a
 * GraphQL input inside variables a few more. V8 parses a megabyte of
 * `[[[…` in about 100 ms; counted first, in one pass over the text that
 * skips strings, such a text costs a few ms.
 */
export const JSON_MAX_DEPTH = 32

const OPEN_OBJECT = 0x7b
const OPEN_ARRAY = 0x5b
const CLOSE_OBJECT = 0x7d
const CLOSE_ARRAY = 0x5d
const QUOTE = 0x22
const BACKSLASH = 0x5c

/** Whether JSON text nests deeper than JSON_MAX_DEPTH levels (strings skipped). */
export const nestsTooDeep = (text: string): boolean => {
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === QUOTE) {
      for (i++; i < text.length && text.charCodeAt(i) !== QUOTE; i++) if (text.charCodeAt(i) === BACKSLASH) i++
    } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      if (++depth > JSON_MAX_DEPTH) return true
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      depth--
    }
  }
  return false
}
