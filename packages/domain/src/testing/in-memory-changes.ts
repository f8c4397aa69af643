import type { ChangeEvent, ChangeFeed, ChangeLog, RecordedEvent } from '../change/change-event.js'

/** Events in memory, in the order their units of work ended. */
export interface InMemoryEventLog {
  readonly events: RecordedEvent[]
  feed: ChangeFeed
  /** A change log for one unit of work, and what to call when it commits. */
  begin(): { changes: ChangeLog, commit(): void }
}

export const inMemoryEventLog = (source = '/people-service'): InMemoryEventLog => {
  const events: RecordedEvent[] = []
  let last = 0
  let prunedThrough = 0
  const listeners = new Set<() => void>()
  return {
    events,
    begin () {
      const pending: ChangeEvent[] = []
      return {
        changes: { record: (event) => { pending.push(event) } },
        commit () {
          for (const event of pending) events.push({ ...structuredClone(event), position: ++last, source })
          if (pending.length > 0) for (const listener of listeners) listener()
        }
      }
    },
    feed: {
      async after ({ after, limit, types, subject }) {
        return events
          .filter((e) => e.position > after && (types === undefined || types.includes(e.type)) && (subject === undefined || e.subject === subject))
          .slice(0, limit)
          .map((e) => structuredClone(e))
      },
      async prunedThrough () { return prunedThrough },
      async lastPosition () { return last },
      async pruneBefore (before, limit) {
        let count = 0
        while (count < limit && events[0] !== undefined && events[0].time < before) {
          prunedThrough = events.shift()?.position ?? prunedThrough
          count++
        }
        return count
      },
      onCommit (listener) {
        listeners.add(listener)
        return () => { listeners.delete(listener) }
      }
    }
  }
}
