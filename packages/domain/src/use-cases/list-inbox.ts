import type { Message } from '../message/message.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'
import { decodeInstantCursor, instantKey, toCursorPage, type CursorPage } from '../shared/page.js'
import { getPerson } from './get-person.js'
import { checkLimit, LIST_LIMITS } from './limits.js'

export interface ListInboxInput {
  limit?: number
  cursor?: string
}

/** One person's inbox: another's cursor names no message of this one. */
const inboxList = (personId: string): string => `inbox:${personId}`

/** `limit + 1` messages of a person's inbox, newest first, as a page of them with each one's cursor. */
export const inboxPage = (personId: string, rows: Message[], limit: number): CursorPage<Message> => {
  const list = inboxList(personId)
  return toCursorPage(rows, limit, (m) => instantKey(list, m.sentAt, m.id))
}

/** Messages sent to a person, newest first, a page at a time. */
export const listInbox = (ports: Pick<Ports, 'people' | 'messages'>) => {
  const get = getPerson(ports)
  return async (personId: string, input: ListInboxInput = {}): Promise<CursorPage<Message>> => {
    const limit = checkLimit(input.limit ?? LIST_LIMITS.inbox.default, LIST_LIMITS.inbox.max)
    const position = input.cursor === undefined ? undefined : decodeInstantCursor(input.cursor, inboxList(personId))
    // Newest first: the page holds what was sent before the cursor's message.
    const before = position && { sentAt: position.at, id: position.id }
    // As for friends: a malformed id is not looked up, only answered 404.
    const rows = limit > 0 && isId(personId) ? await ports.messages.listForPerson(personId, { limit: limit + 1, ...(before ? { before } : {}) }) : []
    if (rows.length === 0) await get(personId)
    return inboxPage(personId, rows, limit)
  }
}
