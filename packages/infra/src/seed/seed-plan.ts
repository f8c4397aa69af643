import type { PersonTable } from '../database.js'
import type { FriendshipPattern } from './friendship-pattern.js'

export type SeedPhase = 'people' | 'friendships' | 'messages'

/** A person as the seed writes it (timestamps as ISO-8601 text), its key left to the loader. */
export type SeedPerson = Omit<PersonTable, 'pk' | 'created_at' | 'updated_at'> & { created_at: string, updated_at: string }

/** Person columns in the order the loaders bind them, the key first. */
export const PERSON_COLUMNS = ['pk', 'id', 'name', 'name_lower', 'age', 'email', 'has_address', 'street', 'city', 'country', 'created_at', 'updated_at', 'version'] as const

/** What to load, the same for both databases; each loader decides how. */
export interface SeedPlan {
  people: number
  /** The people in creation order (their ids increase). */
  persons(): Iterable<SeedPerson>
  pattern: FriendshipPattern
  messagesPerPerson: number
  /**
   * The seed's clock, in Unix milliseconds. Message ids carry it (a counter
   * fills the rest of them, in order); the messages were sent, one per
   * millisecond, in the run up to it, so the service's own messages come
   * after them in every inbox.
   */
  now: number
  /** Called after each statement; throwing stops the seed, undoing the table being loaded. */
  report(phase: SeedPhase, done: number, total: number): void
}

/** People `[from, to)` in ranges of `size`, one per statement: each range's friendships or messages are one statement, reported as it ends. */
export const chunks = (people: number, size: number): Array<{ from: number, to: number }> =>
  Array.from({ length: Math.ceil(people / size) }, (_, k) => ({ from: k * size, to: Math.min(people, (k + 1) * size) }))

/**
 * A table's last report held back until its load is really done (indexes
 * and keys built, which can take a while after the last row), so a progress
 * bar does not sit at 100% meanwhile; still inside the table's transaction,
 * so a listener that throws undoes it.
 */
export const holdingLast = (report: SeedPlan['report']): { report: SeedPlan['report'], done(): void } => {
  let last: Parameters<SeedPlan['report']> | undefined
  return {
    report (phase, done, total) {
      if (done >= total) last = [phase, done, total]
      else report(phase, done, total)
    },
    done () {
      if (last !== undefined) report(...last)
    }
  }
}
