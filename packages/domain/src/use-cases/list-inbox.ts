import { DomainError } from '../errors.js'
import type { Message } from '../message/message.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'
import { decodeCursor, toPage, type Page } from '../shared/page.js'
import { getPerson } from './get-person.js'
import { checkLimit, LIST_LIMITS } from './limits.js'

export interface ListInboxInput {
  limit?: number
  cursor?: string
}

// The form toISOString gives for the years every store can hold: the
// extended years Date also parses (+010000-…) made PostgreSQL fail (500)
// and SQLite compare them as text.
const ISSUED_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

const decodeInboxCursor = (cursor: string): { sentAt: Date, id: string } => {
  const [sentAt = '', id = ''] = decodeCursor(cursor, 2)
  const at = new Date(sentAt)
  if (!ISSUED_INSTANT.test(sentAt) || Number.isNaN(at.getTime()) || at.toISOString() !== sentAt || at.getUTCFullYear() < 1 || !isId(id)) {
    throw new DomainError('INVALID_CURSOR', 'cursor is not one this service issued', 'cursor')
  }
  return { sentAt: at, id }
}

/** Messages sent to a person, newest first, a page at a time. */
export const listInbox = (ports: Pick<Ports, 'people' | 'messages'>) => {
  const get = getPerson(ports)
  return async (personId: string, input: ListInboxInput = {}): Promise<Page<Message>> => {
    const limit = checkLimit(input.limit ?? LIST_LIMITS.inbox.default, LIST_LIMITS.inbox.max)
    const before = input.cursor === undefined ? undefined : decodeInboxCursor(input.cursor)
    // As for friends: a malformed id is not looked up, only answered 404.
    const rows = isId(personId) ? await ports.messages.listForPerson(personId, { limit: limit + 1, ...(before ? { before } : {}) }) : []
    if (rows.length === 0) await get(personId)
    return toPage(rows, limit, (m) => [m.sentAt.toISOString(), m.id])
  }
}
