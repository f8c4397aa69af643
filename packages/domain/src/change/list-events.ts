import { DomainError, validationError } from '../errors.js'
import type { Ports } from '../ports.js'
import { cursorNotIssued, decodeListCursor, encodeCursor, listKey } from '../shared/page.js'
import { checkLimit } from '../use-cases/limits.js'
import { CHANGE_TYPES, isChangeType, type ChangeType, type RecordedEvent } from './change-event.js'

export const EVENT_LIMITS = {
  limit: { default: 100, max: 1000 },
  /** The longest a reader may wait for news (`?wait=`), in seconds. */
  maxWaitSeconds: 30,
  /** A subject is a resource's path: no longer than any the service makes. */
  subjectLength: 1000
} as const

export interface ListEventsInput {
  limit?: number
  cursor?: string
  types?: readonly string[]
  subject?: string
}

/** A page of events, oldest first, and the cursor after it: present even on the last page. */
export interface EventsPage {
  items: RecordedEvent[]
  next: string
}

export const eventsExpired = (): DomainError =>
  new DomainError('EVENTS_EXPIRED', 'the events after this cursor are older than the retention (EVENTS_RETENTION_DAYS) and have been deleted: start again without a cursor')

const CURSOR_LIST = 'events'
const eventCursor = (position: number): string => encodeCursor(listKey(CURSOR_LIST, String(position)))

const decodeEventCursor = (cursor: string): number => {
  const [position = ''] = decodeListCursor(cursor, CURSOR_LIST, 1)
  if (!/^(0|[1-9]\d{0,15})$/.test(position) || !Number.isSafeInteger(Number(position))) throw cursorNotIssued()
  return Number(position)
}

const checkTypes = (types: readonly string[]): ChangeType[] => {
  const unknown = types.find((type) => !isChangeType(type))
  if (unknown !== undefined) throw validationError('type', `has an unknown type ${JSON.stringify(unknown)}; known: ${CHANGE_TYPES.join(', ')}`)
  return [...new Set(types as ChangeType[])]
}

/**
 * A page of the event log after the cursor, in commit order. The next
 * cursor moves past what this page read: to its last event when the page is
 * full; else to the last position committed before the read began (every
 * event up to it was visible to the read), so a filtered reader does not
 * read the same stretch again.
 *
 * Without a cursor the page starts at the oldest event kept. With one,
 * EVENTS_EXPIRED when events after it have been pruned, checked after the
 * read, so a pruning that ran meanwhile is noticed too.
 */
export const listEvents = ({ changeFeed }: Pick<Ports, 'changeFeed'>) =>
  async (input: ListEventsInput = {}): Promise<EventsPage> => {
    const limit = checkLimit(input.limit ?? EVENT_LIMITS.limit.default, EVENT_LIMITS.limit.max)
    const after = input.cursor === undefined ? undefined : decodeEventCursor(input.cursor)
    const types = input.types === undefined ? undefined : checkTypes(input.types)
    const { subject } = input
    if (subject !== undefined && (subject.length === 0 || subject.length > EVENT_LIMITS.subjectLength)) {
      throw validationError('subject', `must be 1 to ${EVENT_LIMITS.subjectLength} characters`)
    }
    const committed = await changeFeed.lastPosition()
    // Without a cursor, from the oldest event kept.
    const from = after ?? await changeFeed.prunedThrough()
    const items = await changeFeed.after({ after: from, limit, ...(types === undefined ? {} : { types }), ...(subject === undefined ? {} : { subject }) })
    if (after !== undefined && after < await changeFeed.prunedThrough()) throw eventsExpired()
    const last = items.at(-1)?.position ?? from
    const reached = items.length === limit ? last : Math.max(last, committed, from)
    return { items, next: eventCursor(reached) }
  }
