import { setImmediate as nextTurn } from 'node:timers/promises'
import type { ChangeFeed, Clock } from '@people-service/domain'

export interface EventPruningOptions {
  feed: Pick<ChangeFeed, 'pruneBefore'>
  clock: Clock
  /** EVENTS_RETENTION_DAYS. */
  retentionDays: number
  /** Events one statement deletes: a few ms of the database, whatever the backlog. */
  batch?: number
  /** Between rounds. */
  everyMs?: number
  onError: (error: unknown) => void
}

export const EVENT_PRUNING = { batch: 500, everyMs: 60_000 } as const

const DAY_MS = 86_400_000

/**
 * Deletes the events older than the retention in the background: a round
 * every minute, each a batch at a time with a turn of the event loop
 * between batches, until a batch comes back short. Several instances may
 * prune at once: each batch deletes a prefix of the log, whoever runs it.
 * Answers how to stop (the round under way ends after its batch).
 */
export const startEventPruning = ({ feed, clock, retentionDays, batch = EVENT_PRUNING.batch, everyMs = EVENT_PRUNING.everyMs, onError }: EventPruningOptions): { stop(): Promise<void> } => {
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  let round: Promise<void> = Promise.resolve()
  const prune = async (): Promise<void> => {
    const before = new Date(clock.now().getTime() - retentionDays * DAY_MS)
    while (await feed.pruneBefore(before, batch) === batch) {
      if (stopped) return
      await nextTurn()
    }
  }
  const schedule = (): void => {
    if (stopped) return
    timer = setTimeout(() => {
      round = prune().catch(onError).finally(schedule)
    }, everyMs)
    timer.unref()
  }
  schedule()
  return {
    async stop () {
      stopped = true
      clearTimeout(timer)
      await round
    }
  }
}
