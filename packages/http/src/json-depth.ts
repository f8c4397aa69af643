/**
 * Nesting a JSON text may have, wherever the service reads one (bodies,
 * WebSocket messages): the API's deepest is a person's address (2), a
 * GraphQL input inside variables a few more. V8 parses a megabyte of
 * `[[[…` in about 100 ms; counted first, in one pass over the text that
 * skips strings, such a text costs a few ms.
 */
export const JSON_MAX_DEPTH = 32

/**
 * Values a JSON text may hold, counted as its arrays, objects and commas:
 * the API's largest is a GraphQL request's few variables. V8 and the
 * checks after it (schemas, prototype keys) took 95 ms over a megabyte of
 * 125,000 short keys and 60 ms over 340,000 `{}`, within the size limit
 * and charged one request; counted in the pass that counts the nesting,
 * such a text is refused in about 2 ms.
 */
export const JSON_MAX_VALUES = 4096

const TOO_MANY_VALUES = `holds more than ${JSON_MAX_VALUES.toLocaleString('en')} values`

const OPEN_OBJECT = 0x7b
const OPEN_ARRAY = 0x5b
const CLOSE_OBJECT = 0x7d
const CLOSE_ARRAY = 0x5d
const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c

/** Where the string opened at `start` closes (its quote's index; the text's length when it never does). */
const endOfString = (text: string, start: number): number => {
  let i = start + 1
  for (; i < text.length && text.charCodeAt(i) !== QUOTE; i++) if (text.charCodeAt(i) === BACKSLASH) i++
  return i
}

/**
 * Why a JSON text is refused before it is parsed: nested deeper than
 * JSON_MAX_DEPTH levels, or holding more than JSON_MAX_VALUES values; or
 * undefined. One pass, strings skipped.
 */
export const overJsonLimits = (text: string): string | undefined => {
  let depth = 0
  let values = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === QUOTE) {
      i = endOfString(text, i)
    } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      if (++depth > JSON_MAX_DEPTH) return `nests deeper than ${JSON_MAX_DEPTH} levels`
      if (++values > JSON_MAX_VALUES) return TOO_MANY_VALUES
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      depth--
    } else if (code === COMMA && ++values > JSON_MAX_VALUES) {
      return TOO_MANY_VALUES
    }
  }
  return undefined
}

/** The JSON string text[start..end] (its quotes included) as a string; undefined when it is not one. */
const stringBetween = (text: string, start: number, end: number): string | undefined => {
  try {
    const value: unknown = JSON.parse(text.slice(start, end + 1))
    return typeof value === 'string' ? value : undefined
  } catch {
    return undefined
  }
}

/** Whether text[start..end) is `name` character for character. */
const spells = (text: string, start: number, end: number, name: string): boolean => {
  if (end - start !== name.length) return false
  for (let i = 0; i < name.length; i++) if (text.charCodeAt(start + i) !== name.charCodeAt(i)) return false
  return true
}

/**
 * The string members `names` of a JSON object text's top level, in one pass
 * that builds nothing (nested values and other members are skipped): a
 * megabyte of `{}` that JSON.parse takes 40 ms over costs about two. Names
 * are compared as written: one written with escapes is not recognised (no
 * client writes `type` so), else a text of many escaped names would cost a
 * parse each. Where a name appears twice its last string value counts.
 * Text that is not an object answers what it could find.
 */
export const topLevelStrings = <Name extends string>(text: string, names: readonly Name[]): Partial<Record<Name, string>> => {
  // Where each name's last value starts and ends: only those are read, once the pass is over.
  const starts = names.map(() => -1)
  const ends = names.map(() => -1)
  let depth = 0
  let inObject = false
  let expectingName = false
  // The index in `names` of the member being read; -1 for another.
  let member = -1
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === QUOTE) {
      const start = i
      i = endOfString(text, i)
      if (depth !== 1 || !inObject) continue
      if (expectingName) {
        member = -1
        for (let n = 0; n < names.length && member === -1; n++) if (spells(text, start + 1, i, names[n]!)) member = n
        expectingName = false
      } else if (member !== -1) {
        starts[member] = start
        ends[member] = i
      }
    } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      if (depth++ === 0) {
        inObject = code === OPEN_OBJECT
        expectingName = inObject
      }
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      depth--
    } else if (code === COMMA && depth === 1) {
      expectingName = inObject
      member = -1
    }
  }
  const found: Partial<Record<Name, string>> = {}
  names.forEach((name, n) => {
    const value = starts[n] === -1 ? undefined : stringBetween(text, starts[n]!, ends[n]!)
    if (value !== undefined) found[name] = value
  })
  return found
}
