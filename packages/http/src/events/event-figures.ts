import type { ChangeFeed, Clock } from '@people-service/domain'
import type { EventLogFigures } from '../plugins/metrics.js'

/** The event log's figures for GET /metrics: three reads by key, whatever the log's size. */
export const eventLogFigures = (feed: Pick<ChangeFeed, 'lastPosition' | 'prunedThrough' | 'after'>, clock: Clock) =>
  async (): Promise<EventLogFigures> => {
    const [lastPosition, prunedThrough] = await Promise.all([feed.lastPosition(), feed.prunedThrough()])
    const [oldest] = await feed.after({ after: prunedThrough, limit: 1 })
    return {
      lastPosition,
      retained: lastPosition - prunedThrough,
      oldestAgeSeconds: oldest === undefined ? 0 : Math.max(0, (clock.now().getTime() - oldest.time.getTime()) / 1000)
    }
  }
