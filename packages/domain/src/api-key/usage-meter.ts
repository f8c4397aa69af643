import type { Clock } from '../shared/clock.js'
import type { ApiKeyUsageRepository, DailyUsage, UsageCount } from './api-key-usage.js'

/**
 * Counts requests per key and UTC day in memory and writes them in batches,
 * so serving a request never waits for a database write.
 */
export interface UsageMeter {
  record(keyId: string): void
  /**
   * A key's counts: those `stored` reads, read while no flush runs, and this
   * instance's not stored yet. A flush takes counts out of memory before it
   * has stored them: read meanwhile, they were in neither, and a key's
   * total went down between two reads.
   */
  usage(keyId: string, stored: () => Promise<DailyUsage[]>): Promise<DailyUsage[]>
  /** Stores what was counted; on failure the counts are kept for the next flush. */
  flush(): Promise<void>
}

const DAY_MS = 86_400_000

/**
 * Counts stored per write: each chunk is one statement (its counts bound as
 * one parameter) in a transaction of its own, so a flush of any number of
 * keys never meets a database's limit on a statement, and the store serves
 * other requests between chunks. A chunk that fails goes back, with those
 * after it, to the next flush; those stored before it stay stored.
 */
export const USAGE_FLUSH_CHUNK = 1_000

export const createUsageMeter = ({ apiKeyUsage, clock }: { apiKeyUsage: ApiKeyUsageRepository, clock: Clock }): UsageMeter => {
  // keyId -> day -> requests
  let counts = new Map<string, Map<string, number>>()
  let flushing: Promise<void> = Promise.resolve()
  // The day string changes once a day; do not format a date per request.
  let day = ''
  let dayEnds = 0
  const today = (): string => {
    const now = clock.now().getTime()
    if (now >= dayEnds || now < dayEnds - DAY_MS) {
      day = new Date(now).toISOString().slice(0, 10)
      dayEnds = Math.floor(now / DAY_MS) * DAY_MS + DAY_MS
    }
    return day
  }

  const add = (into: Map<string, Map<string, number>>, { keyId, day, requests }: UsageCount): void => {
    const days = into.get(keyId) ?? new Map<string, number>()
    days.set(day, (days.get(day) ?? 0) + requests)
    into.set(keyId, days)
  }

  const flushNow = async (): Promise<void> => {
    if (counts.size === 0) return
    const batch = counts
    counts = new Map()
    // In key order: instances adding to the same rows lock them in one order, never into a deadlock.
    const rows = [...batch].flatMap(([keyId, days]) => [...days].map(([day, requests]) => ({ keyId, day, requests })))
      .sort((a, b) => (a.keyId < b.keyId ? -1 : a.keyId > b.keyId ? 1 : a.day < b.day ? -1 : a.day > b.day ? 1 : 0))
    for (let start = 0; start < rows.length; start += USAGE_FLUSH_CHUNK) {
      try {
        await apiKeyUsage.add(rows.slice(start, start + USAGE_FLUSH_CHUNK))
      } catch (error) {
        for (const row of rows.slice(start)) add(counts, row)
        throw error
      }
    }
  }

  return {
    // Once per request through a key: no record object, and the key's map is stored only once.
    record (keyId) {
      const day = today()
      let days = counts.get(keyId)
      if (days === undefined) {
        days = new Map()
        counts.set(keyId, days)
      }
      days.set(day, (days.get(day) ?? 0) + 1)
    },
    usage (keyId, stored) {
      // In turn with the flushes: after the one running, before the next.
      const read = flushing.catch(() => {}).then(async () => [...await stored(), ...[...counts.get(keyId) ?? []].map(([day, requests]) => ({ day, requests }))])
      flushing = read.then(() => {}, () => {})
      return read
    },
    flush () {
      // One flush at a time: a timer and shutdown may ask at once.
      flushing = flushing.catch(() => {}).then(flushNow)
      return flushing
    }
  }
}
