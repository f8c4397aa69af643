import type { Message } from '../message/message.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'
import { decodeInstantCursor, instantKey, toPage, type Page } from '../shared/page.js'
import { getPerson } from './get-person.js'
import { checkLimit, LIST_LIMITS } from './limits.js'

export interface ListInboxInput {
  limit?: number
  cursor?: string
}

/** Messages sent to a person, newest first, a page at a time. */
export const listInbox = (ports: Pick<Ports, 'people' | 'messages'>) => {
  const get = getPerson(ports)
  return async (personId: string, input: ListInboxInput = {}): Promise<Page<Message>> => {
    const limit = checkLimit(input.limit ?? LIST_LIMITS.inbox.default, LIST_LIMITS.inbox.max)
    // One person's inbox: another's cursor names no message of this one.
    const list = `inbox:${personId}`
    const position = input.cursor === undefined ? undefined : decodeInstantCursor(input.cursor, list)
    // Newest first: the page holds what was sent before the cursor's message.
    const before = position && { sentAt: position.at, id: position.id }
    // As for friends: a malformed id is not looked up, only answered 404.
    const rows = isId(personId) ? await ports.messages.listForPerson(personId, { limit: limit + 1, ...(before ? { before } : {}) }) : []
    if (rows.length === 0) await get(personId)
    return toPage(rows, limit, (m) => instantKey(list, m.sentAt, m.id))
  }
}
