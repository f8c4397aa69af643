import { DomainError } from '../errors.js'

/** One page of a keyset-paginated list; `next` is absent on the last page. */
export interface Page<T> {
  items: T[]
  next?: string
}

/**
 * Cursors are opaque to clients: base64url of a JSON array of the sort key of
 * the last item served. Opaque so the sort key can change without breaking
 * the contract; decoded strictly so a tampered cursor is a client error.
 */
export const encodeCursor = (key: readonly string[]): string =>
  Buffer.from(JSON.stringify(key)).toString('base64url')

export const decodeCursor = (cursor: string, parts: number): string[] => {
  let key: unknown
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    key = undefined
  }
  if (!Array.isArray(key) || key.length !== parts || !key.every((k) => typeof k === 'string')) {
    throw new DomainError('INVALID_CURSOR', 'cursor is not one this service issued', 'cursor')
  }
  return key
}

/** Turns `limit + 1` fetched rows into a page, with a cursor when more exist. */
export const toPage = <T>(rows: T[], limit: number, keyOf: (item: T) => string[]): Page<T> => {
  if (rows.length <= limit) return { items: rows }
  const items = rows.slice(0, limit)
  return { items, next: encodeCursor(keyOf(items[items.length - 1] as T)) }
}
