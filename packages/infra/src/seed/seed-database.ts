import { systemClock, uuidv7Generator } from '@people-service/domain'
import { sql, type Insertable } from 'kysely'
import type { Database, DatabaseHandle } from '../database.js'
import { toPersonRow } from '../person/person.rows.js'
import { bulkInsert, setAsideIndexes } from './bulk-load.js'
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

/**
 * Who befriends whom, as positions 0 … n-1 in id order. A circulant graph:
 * person i befriends i ± o (mod n) for friends/2 random offsets 0 < o < n/2,
 * so no pair comes twice. An odd count adds one partner each: the person
 * opposite (i + n/2) when n is even; when n is odd, neighbours pair up
 * (0-1, 2-3, …) and the last person has one friend less, since n people
 * cannot all have an odd number of friends. Never more than n - 1 each.
 */
const friendshipPattern = (random: () => number, n: number, friends: number): { offsets: number[], partner?: (a: number) => number | undefined } => {
  const wanted = Math.min(friends, Math.max(0, n - 1))
  const odd = wanted % 2 === 1
  // Offset 1 is kept for the pairs when n is odd; n/2 (even n) is never drawn.
  const lowest = odd && n % 2 === 1 ? 2 : 1
  const highest = Math.ceil(n / 2) - 1
  const chosen = new Set<number>()
  while (chosen.size < Math.floor(wanted / 2)) chosen.add(lowest + Math.floor(random() * (highest - lowest + 1)))
  const offsets = [...chosen]
  if (!odd) return { offsets }
  if (n % 2 === 0) return { offsets, partner: (a) => (a + n / 2) % n }
  return { offsets, partner: (a) => (a === n - 1 ? undefined : a % 2 === 0 ? a + 1 : a - 1) }
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
  // Keys given here, after any already taken, so friendships and messages can name them.
  const { rows: [last] } = await sql<{ pk: number | null }>`select max(pk) as pk from person`.execute(handle.db)
  const firstPk = Number(last?.pk ?? 0) + 1
  await load(handle, 'person', (function * () {
    for (let i = 0; i < n; i++) {
      const id = ids.next()
      personIds[i] = id
      yield { pk: firstPk + i, ...toPersonRow({ id, ...syntheticPerson(random, i), createdAt: now, updatedAt: now, version: 1 }) }
    }
  })(), reporter('people', n))
  // PostgreSQL's identity sequence does not see keys given explicitly.
  if (handle.dialect === 'postgres') await sql`select setval(pg_get_serial_sequence('person', 'pk'), (select coalesce(max(pk), 0) + 1 from person), false)`.execute(handle.db)

  const { offsets, partner } = friendshipPattern(random, n, options.friends)
  const pairs = n * offsets.length + Math.floor(n / 2) * (partner === undefined ? 0 : 1)
  // Each person's rows are written together, friends in id order (ids
  // increase with i), so the primary key's b-tree only ever grows at its end.
  await load(handle, 'friendship', (function * () {
    for (let a = 0; a < n; a++) {
      const friends = offsets.flatMap((o) => [(a + o) % n, (a - o + n) % n])
      const b = partner?.(a)
      if (b !== undefined) friends.push(b)
      friends.sort((x, y) => x - y)
      for (const b of friends) yield { person_pk: firstPk + a, friend_pk: firstPk + b }
    }
  })(), reporter('friendships', pairs, 2))

  const messages = n * options.messages
  await load(handle, 'message', (function * () {
    for (let i = 0; i < messages; i++) {
      yield {
        id: ids.next(),
        person_pk: firstPk + Math.floor(i / options.messages),
        text: `Synthetic message ${i}`,
        sender_id: 'seed',
        sent_at: new Date(now.getTime() + i).toISOString()
      }
    }
  })(), reporter('messages', messages))

  return { ids: personIds, friendships: pairs, messages }
}
