import { MESSAGE_LIMITS, PERSON_LIMITS } from '@people-service/domain'
import { GraphQLError } from 'graphql'

/**
 * How large a response may grow (MAX_RESPONSE_BYTES), and the worst-case
 * JSON size of every value a response carries: GraphQL's cost (graphql/cost.ts)
 * and REST's list routes both read these figures.
 */
export const RESPONSE_LIMITS = {
  /** The largest response body the service builds, unless MAX_RESPONSE_BYTES says otherwise. */
  defaultMaxBytes: 8 * 1024 * 1024,
  /** The smallest MAX_RESPONSE_BYTES may be: one whole person and one full message fit many times over. */
  leastMaxBytes: 1024 * 1024
} as const

/**
 * JSON writes a character in at most six bytes: a control character (U+0001)
 * or a lone surrogate as `\uXXXX`; anything else in at most four.
 */
export const JSON_BYTES_PER_CHARACTER = 6

/** The most a JSON string of at most `characters` characters takes, quotes included. */
export const jsonStringBytes = (characters: number): number => 2 + JSON_BYTES_PER_CHARACTER * characters

/** What a cursor this service issues is at most: a list's name and an item's sort key, in base64url. */
const CURSOR_CHARACTERS = 256

/** The worst-case JSON size of each kind of value a response carries. */
export const VALUE_BYTES = {
  /** An id the service issued (UUIDv7), an account's or key's included. */
  id: jsonStringBytes(36),
  /** An instant as toISOString writes it. */
  instant: jsonStringBytes(24),
  cursor: jsonStringBytes(CURSOR_CHARACTERS),
  /** An integer as GraphQL's Int (32 bits), or null. */
  int: 11,
  boolean: 5,
  name: jsonStringBytes(PERSON_LIMITS.nameLength),
  email: jsonStringBytes(PERSON_LIMITS.emailLength),
  addressField: jsonStringBytes(PERSON_LIMITS.addressFieldLength),
  text: jsonStringBytes(MESSAGE_LIMITS.textLength)
} as const

/** A JSON object's worst-case size, from its members' keys and worst-case values. */
export const objectBytes = (members: Record<string, number>): number => {
  const entries = Object.entries(members)
  return 2 + entries.reduce((sum, [key, value]) => sum + key.length + 3 + value, 0) + Math.max(0, entries.length - 1)
}

/** A JSON array of `entries` values of at most `entryBytes` each. */
export const arrayBytes = (entries: number, entryBytes: number): number => 2 + entries * (entryBytes + 1)

/** The worst-case JSON size of the entries of REST's lists. */
export const ENTRY_BYTES = {
  personSummary: objectBytes({ id: VALUE_BYTES.id, name: VALUE_BYTES.name }),
  message: objectBytes({ id: VALUE_BYTES.id, personId: VALUE_BYTES.id, text: VALUE_BYTES.text, senderId: VALUE_BYTES.id, sentAt: VALUE_BYTES.instant })
} as const

/**
 * The most entries of `entryBytes` a page may hold within `maxBytes`: the
 * limit asked for, or fewer, at least one. A page cut short ends early and
 * points at the rest with its `Link: rel="next"`.
 */
export const entriesWithin = (maxBytes: number, entryBytes: number, limit: number): number =>
  Math.max(1, Math.min(limit, Math.floor((maxBytes - 2) / (entryBytes + 1))))

/** The bytes JSON takes to write `text` as a string, quotes included: what a response pays for it. */
export const jsonStringLength = (text: string): number => {
  let bytes = 2
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x20) bytes += code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d ? 2 : 6
    else if (code === 0x22 || code === 0x5c) bytes += 2
    else if (code < 0x80) bytes += 1
    else if (code < 0x800) bytes += 2
    else if (code >= 0xd800 && code <= 0xdfff) bytes += 3 // a pair: 4 bytes in all; a lone one \uXXXX: 6
    else bytes += 3
  }
  return bytes
}

/**
 * What an answer may still take while it is built: each large value and
 * each piece the database writes is counted as it arrives, and the first
 * past MAX_RESPONSE_BYTES fails, so the rest is never read into memory.
 */
export class ResponseBudget {
  readonly max: number
  #left: number

  constructor (max: number) {
    this.max = max
    this.#left = max
  }

  /** Counts `bytes` more; throws ResponseTooLarge past the limit. */
  spend (bytes: number): void {
    this.#left -= bytes
    if (this.#left < 0) throw new ResponseTooLarge(this.max)
  }
}

/** The error of an answer cut short: GraphQL shows its message and code, as it does a refusal's. */
export class ResponseTooLarge extends GraphQLError {
  constructor (max: number) {
    super(`the answer grew past the ${max.toLocaleString('en')} bytes a response may take (MAX_RESPONSE_BYTES) and was not sent; ask for less`, {
      extensions: { code: 'RESPONSE_TOO_LARGE' }
    })
    this.name = 'ResponseTooLarge'
  }
}
