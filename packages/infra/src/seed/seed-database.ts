import { systemClock, uuidv7Generator } from '@people-service/domain'
import type { DatabaseHandle } from '../database.js'
import { toPersonRow } from '../person/person.rows.js'
import { sqliteConnectionOf } from '../sqlite/open-sqlite.js'
import { friendshipPattern } from './friendship-pattern.js'
import type { SeedPerson, SeedPhase, SeedPlan } from './seed-plan.js'
import { seedPostgres } from './seed-postgres.js'
import { seedSqlite } from './seed-sqlite.js'
import { seededRandom, syntheticPerson } from './synthetic.js'

export interface SeedOptions {
  people: number
  /**
   * Friends per person, exactly (at most people - 1; with an odd count and an
   * odd number of people, one person has one less). Each friendship is
   * stored in both directions.
   */
  friends: number
  /** Messages per person. */
  messages: number
  seed?: number
  /**
   * Hears how far each table's load is, after every statement (in
   * friendships, not rows, for friendships). Throwing stops the seed: the
   * table being loaded stays as it was, those before it stay loaded.
   */
  onProgress?(phase: SeedPhase, done: number, total: number): void
}

export interface SeedResult {
  /** The people's ids, in creation order. */
  ids: string[]
  friendships: number
  messages: number
}

/**
 * Fills a migrated database with synthetic people, friendships and messages,
 * next to what is there. Nothing else may use the handle meanwhile.
 */
export const seedDatabase = async (handle: DatabaseHandle, options: SeedOptions): Promise<SeedResult> => {
  const random = seededRandom(options.seed ?? 42)
  const ids = uuidv7Generator()
  const now = systemClock.now()
  const n = options.people
  const personIds: string[] = new Array(n)
  const pattern = friendshipPattern(random, n, options.friends)
  const plan: SeedPlan = {
    people: n,
    * persons (): Iterable<SeedPerson> {
      for (let i = 0; i < n; i++) {
        const id = ids.next()
        personIds[i] = id
        // Timestamps come out of toPersonRow as ISO text.
        yield toPersonRow({ id, ...syntheticPerson(random, i), createdAt: now, updatedAt: now, version: 1 }) as SeedPerson
      }
    },
    pattern,
    messagesPerPerson: options.messages,
    now: now.getTime(),
    report: options.onProgress ?? (() => {})
  }
  const connection = handle.dialect === 'sqlite' ? sqliteConnectionOf(handle.db) : undefined
  if (connection !== undefined) await seedSqlite(connection, plan)
  else if (handle.dialect === 'postgres') await seedPostgres(handle.db, plan)
  else throw new Error('this SQLite handle was not opened by createDatabase: the seed needs its connection')
  return { ids: personIds, friendships: pattern.friendships, messages: n * options.messages }
}
