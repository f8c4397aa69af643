import { systemClock, uuidv7Generator } from '@people-service/domain'
import type { Insertable } from 'kysely'
import type { Database, DatabaseHandle } from '../database.js'
import { toPersonRow } from '../person/person.rows.js'
import { bulkInsert, setAsideIndexes } from './bulk-load.js'
import { seededRandom, syntheticPerson } from './synthetic.js'

export interface SeedOptions {
  people: number
  /** Friends per person on average; each friendship is stored in both directions. */
  friends: number
  /** Messages per person. */
  messages: number
  seed?: number
  onProgress?(phase: 'people' | 'friendships' | 'messages', done: number, total: number): void
}

export interface SeedResult {
  ids: string[]
  friendships: number
  messages: number
}

type Phase = Parameters<NonNullable<SeedOptions['onProgress']>>[0]

/**
 * Loads one table in one transaction, its indexes set aside meanwhile: an
 * interrupted seed leaves the table as it was, indexes included.
 */
const load = async <T extends keyof Database>(
  handle: DatabaseHandle,
  table: T,
  rows: Iterable<Insertable<Database[T]>>,
  progress: (rows: number) => void
): Promise<void> => {
  await handle.db.transaction().execute(async (trx) => {
    const restore = await setAsideIndexes(trx, handle.dialect, table)
    await bulkInsert(trx, table, rows, progress)
    await restore()
  })
}

/** Fills a migrated database with synthetic people, friendships and messages. */
export const seedDatabase = async (handle: DatabaseHandle, options: SeedOptions): Promise<SeedResult> => {
  const random = seededRandom(options.seed ?? 42)
  const ids = uuidv7Generator()
  const now = systemClock.now()
  const report = options.onProgress ?? (() => {})
  const reporter = (phase: Phase, total: number, perItem = 1) => (rows: number) => report(phase, rows / perItem, total)
  const n = options.people

  const personIds: string[] = new Array(n)
  await load(handle, 'person', (function * () {
    for (let i = 0; i < n; i++) {
      const id = ids.next()
      personIds[i] = id
      yield toPersonRow({ id, ...syntheticPerson(random, i), createdAt: now, updatedAt: now, version: 1 })
    }
  })(), reporter('people', n))

  // Friendships form a circulant graph: person i befriends i ± o (mod n) for
  // friends/2 random offsets 0 < o < n/2, so everyone has exactly `friends`
  // friends and no pair comes twice. Each person's rows are written together,
  // friends in id order (ids increase with i), so the primary key's b-tree
  // only ever grows at its end.
  const chosen = new Set<number>()
  const wanted = Math.min(Math.floor(options.friends / 2), Math.max(0, Math.ceil(n / 2) - 1))
  while (chosen.size < wanted) chosen.add(1 + Math.floor(random() * (Math.ceil(n / 2) - 1)))
  const offsets = [...chosen]
  const pairs = n * offsets.length
  const createdAt = now.toISOString()
  await load(handle, 'friendship', (function * () {
    for (let a = 0; a < n; a++) {
      const friends = offsets.flatMap((o) => [(a + o) % n, (a - o + n) % n]).sort((x, y) => x - y)
      for (const b of friends) yield { person_id: personIds[a] as string, friend_id: personIds[b] as string, created_at: createdAt }
    }
  })(), reporter('friendships', pairs, 2))

  const messages = n * options.messages
  await load(handle, 'message', (function * () {
    for (let i = 0; i < messages; i++) {
      yield {
        id: ids.next(),
        person_id: personIds[Math.floor(i / options.messages)] as string,
        text: `Synthetic message ${i}`,
        sender_id: 'seed',
        sent_at: new Date(now.getTime() + i).toISOString()
      }
    }
  })(), reporter('messages', messages))

  return { ids: personIds, friendships: pairs, messages }
}
