import type { Message } from '../message/message.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'
import type { CursorPage } from '../shared/page.js'
import { inboxPage } from './list-inbox.js'
import { checkLimit, LIST_LIMITS } from './limits.js'

/**
 * The newest messages of many people in one round trip, at most `limit`
 * each, newest first. Every asked id gets an entry, as in listFriendsOfMany.
 */
export const listInboxOfMany = ({ messages }: Pick<Ports, 'messages'>) =>
  async (personIds: readonly string[], limit: number = LIST_LIMITS.inbox.default): Promise<Map<string, Message[]>> => {
    checkLimit(limit, LIST_LIMITS.inbox.max)
    const wanted = [...new Set(personIds)].filter(isId)
    const found = limit === 0 || wanted.length === 0 ? new Map<string, Message[]>() : await messages.listForMany(wanted, limit)
    return new Map(personIds.map((id) => [id, found.get(id) ?? []]))
  }

/** The first page of many people's inboxes in one round trip, as listInbox gives it to each (the same cursors). */
export const pageInboxOfMany = ({ messages }: Pick<Ports, 'messages'>) =>
  async (personIds: readonly string[], limit: number = LIST_LIMITS.inbox.default): Promise<Map<string, CursorPage<Message>>> => {
    checkLimit(limit, LIST_LIMITS.inbox.max)
    const wanted = [...new Set(personIds)].filter(isId)
    const found = limit === 0 || wanted.length === 0 ? new Map<string, Message[]>() : await messages.listForMany(wanted, limit + 1)
    return new Map(personIds.map((id) => [id, inboxPage(id, found.get(id) ?? [], limit)]))
  }
