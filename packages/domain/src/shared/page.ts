import { DomainError } from '../errors.js'
import { isId } from './ids.js'

/** One page of a keyset-paginated list; `next` is absent on the last page. */
export interface Page<T> {
  items: T[]
  next?: string
}

/**
 * Cursors are opaque to clients: base64url of a JSON array of the sort key of
 * the last item served. Opaque so the sort key can change without breaking
 * the contract; decoded strictly so a tampered cursor is a client error.
 * Every list but the people's (whose cursors GraphQL's connection shares)
 * puts its name first (listKey), so that one list's cursor is never read as
 * another's: a /people cursor holds an id that is also a valid username, and
 * an inbox's cursor fits every other inbox.
 */
export const encodeCursor = (key: readonly string[]): string =>
  Buffer.from(JSON.stringify(key)).toString('base64url')

/** The refusal of a cursor this service did not issue (or of another list's). */
export const cursorNotIssued = (): DomainError => new DomainError('INVALID_CURSOR', 'cursor is not one this service issued', 'cursor')

export const decodeCursor = (cursor: string, parts: number): string[] => {
  let key: unknown
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    key = undefined
  }
  if (!Array.isArray(key) || key.length !== parts || !key.every((k) => typeof k === 'string')) throw cursorNotIssued()
  return key
}

/** The sort key of an item of the list `list`, as its cursors hold it. */
export const listKey = (list: string, ...key: string[]): string[] => [list, ...key]

/** The sort key a cursor of the list `list` holds (`parts` of it); another list's cursor is INVALID_CURSOR. */
export const decodeListCursor = (cursor: string, list: string, parts: number): string[] => {
  const [name, ...key] = decodeCursor(cursor, parts + 1)
  if (name !== list) throw cursorNotIssued()
  return key
}

// The form toISOString gives for the years every store can hold: the
// extended years Date also parses (+010000-…) made PostgreSQL fail (500)
// and SQLite compare them as text.
const ISSUED_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** A position in a list ordered by an instant, then by id (an inbox, the API keys). */
export interface InstantPosition {
  at: Date
  id: string
}

export const instantKey = (list: string, at: Date, id: string): string[] => listKey(list, at.toISOString(), id)

/** The position an `instantKey` cursor of the list `list` names; anything else is INVALID_CURSOR. */
export const decodeInstantCursor = (cursor: string, list: string): InstantPosition => {
  const [instant = '', id = ''] = decodeListCursor(cursor, list, 2)
  const at = new Date(instant)
  if (!ISSUED_INSTANT.test(instant) || Number.isNaN(at.getTime()) || at.toISOString() !== instant || at.getUTCFullYear() < 1 || !isId(id)) throw cursorNotIssued()
  return { at, id }
}

/**
 * A page that also names, for each item, the cursor of the page that starts
 * after it: what a connection's edges carry. `next` is the last one's, when
 * more exist.
 */
export interface CursorPage<T> extends Page<T> {
  cursors: string[]
}

/** Turns `limit + 1` fetched rows into a page with every item's cursor. */
export const toCursorPage = <T>(rows: T[], limit: number, keyOf: (item: T) => string[]): CursorPage<T> => {
  const items = rows.slice(0, limit)
  const cursors = items.map((item) => encodeCursor(keyOf(item)))
  const next = rows.length > limit ? cursors.at(-1) : undefined
  return next === undefined ? { items, cursors } : { items, cursors, next }
}

/** Turns `limit + 1` fetched rows into a page, with a cursor when more exist. */
export const toPage = <T>(rows: T[], limit: number, keyOf: (item: T) => string[]): Page<T> => {
  if (rows.length <= limit) return { items: rows }
  const items = rows.slice(0, limit)
  return { items, next: encodeCursor(keyOf(items[items.length - 1] as T)) }
}
