import { isChangeType, type ChangeEvent, type ChangeFeed, type ChangeLog, type RecordedEvent } from '@people-service/domain'
import { CompiledQuery, type Kysely } from 'kysely'
import type { Database, Dialect } from '../database.js'
import { translateErrors } from '../database-errors.js'
import { toDate } from '../person/person.rows.js'

/*
 * The transactional outbox. A unit of work collects its events (ChangeLog)
 * and writes them as its last statement before COMMIT, numbering them from
 * event_sequence's one row:
 *
 * - PostgreSQL: one statement updates the row (its lock is then held to the
 *   commit) and inserts the events with the numbers it gave. A transaction
 *   that numbers later waits for the lock, so it numbers after every
 *   transaction that numbered before it has committed and become visible:
 *   positions rise in commit order, and a reader following `position >
 *   cursor` never meets a smaller number committed after a larger one.
 *   Taken last, the lock is held for one statement and the commit.
 * - SQLite: one writer at a time already; the same row is updated and the
 *   events inserted, two statements on the one connection. Readers wait
 *   for the group's commit (sqlite/group-commit.ts).
 *
 * The counter never goes back, whatever is pruned: a position is never
 * given twice.
 */

const COLUMNS = 'position, id, type, source, subject, time, actor_kind, actor_id, data'

const POSTGRES_WRITE = `with numbered as (
    update event_sequence set last = last + cardinality($1::text[]) where id = 1 returning last)
  insert into event (${COLUMNS})
  select numbered.last - cardinality($1::text[]) + e.ord, e.id, e.type, $2, e.subject, e.time, e.actor_kind, e.actor_id, e.data
  from numbered, unnest($1::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::text[], $8::text[])
    with ordinality as e(id, type, subject, time, actor_kind, actor_id, data, ord)`

// Two statements: the same UPDATE with RETURNING cost 60 µs more per transaction.
const SQLITE_NUMBER = 'update event_sequence set last = last + ? where id = 1'
const SQLITE_LAST = 'select last from event_sequence where id = 1'
const sqliteInsert = (count: number): string =>
  `insert into event (${COLUMNS}) values ${Array.from({ length: count }, () => '(?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`

export type EventWriter = (db: Kysely<Database>, events: readonly ChangeEvent[]) => Promise<void>

/**
 * Where the stores put their events: `write` inside the transaction, as its
 * last statement; `committed` once it has committed, which wakes whoever
 * listens (`onCommit`: readers waiting for news, relays).
 */
export interface EventOutbox {
  write: EventWriter
  committed(): void
  onCommit(listener: () => void): () => void
}

export const eventOutbox = (dialect: Dialect, source: string): EventOutbox => {
  const listeners = new Set<() => void>()
  return {
    write: eventWriter(dialect, source),
    committed () {
      for (const listener of listeners) listener()
    },
    onCommit (listener) {
      listeners.add(listener)
      return () => { listeners.delete(listener) }
    }
  }
}

/**
 * Runs `work` in a transaction of `db` and writes the events it recorded
 * just before the commit; tells the outbox once committed.
 */
export const withEvents = async <T>(db: Kysely<Database>, outbox: EventOutbox, work: (trx: Kysely<Database>, changes: ChangeLog) => Promise<T>): Promise<T> => {
  const changes = pendingEvents()
  const result = await db.transaction().execute(async (trx) => {
    const result = await work(trx, changes)
    await outbox.write(trx, changes.events)
    return result
  })
  if (changes.events.length > 0) outbox.committed()
  return result
}

/** Writes a transaction's events, numbered in commit order; `db` is the transaction. */
const eventWriter = (dialect: Dialect, source: string): EventWriter => {
  if (dialect === 'postgres') {
    return async (db, events) => {
      if (events.length === 0) return
      await db.executeQuery(CompiledQuery.raw(POSTGRES_WRITE, [
        events.map((e) => e.id), source, events.map((e) => e.type), events.map((e) => e.subject),
        events.map((e) => e.time.toISOString()), events.map((e) => e.actorKind), events.map((e) => e.actorId),
        events.map((e) => JSON.stringify(e.data))
      ]))
    }
  }
  return async (db, events) => {
    if (events.length === 0) return
    await db.executeQuery(CompiledQuery.raw(SQLITE_NUMBER, [events.length]))
    const { rows: [numbered] } = await db.executeQuery<{ last: number }>(CompiledQuery.raw(SQLITE_LAST, []))
    if (numbered === undefined) throw new Error('event_sequence has no row: the migration 0015-event-log did not run')
    const first = Number(numbered.last) - events.length + 1
    await db.executeQuery(CompiledQuery.raw(sqliteInsert(events.length), events.flatMap((e, index) => [
      first + index, e.id, e.type, source, e.subject, e.time.toISOString(), e.actorKind, e.actorId, JSON.stringify(e.data)
    ])))
  }
}

/** A unit of work's events, kept until it writes them just before its commit. */
export const pendingEvents = (): ChangeLog & { readonly events: readonly ChangeEvent[] } => {
  const events: ChangeEvent[] = []
  return { events, record: (event) => { events.push(event) } }
}

interface EventRow {
  position: number | string
  id: string
  type: string
  source: string
  subject: string
  time: string | Date
  actor_kind: string
  actor_id: string
  data: string
}

const toEvent = (row: EventRow): RecordedEvent => {
  if (!isChangeType(row.type)) throw new Error(`event ${row.id} has an unknown type`)
  return {
    position: Number(row.position),
    id: row.id,
    type: row.type,
    source: row.source,
    subject: row.subject,
    time: toDate(row.time),
    actorKind: row.actor_kind === 'apikey' ? 'apikey' : 'account',
    actorId: row.actor_id,
    data: JSON.parse(row.data) as RecordedEvent['data']
  }
}

/** The committed events, read in position order (GET /events, webhooks, NATS). */
export const kyselyChangeFeed = (db: Kysely<Database>, dialect: Dialect, outbox: Pick<EventOutbox, 'onCommit'>): ChangeFeed => {
  const position = (value: number) => (dialect === 'postgres' ? String(value) : value)
  const reads: Omit<ChangeFeed, 'onCommit'> = translateErrors<Omit<ChangeFeed, 'onCommit'>>({
    async after ({ after, limit, types, subject }) {
      let query = db.selectFrom('event').selectAll().where('position', '>', position(after))
      if (types !== undefined) query = query.where('type', 'in', [...types])
      if (subject !== undefined) query = query.where('subject', '=', subject)
      return (await query.orderBy('position').limit(limit).execute()).map(toEvent)
    },

    async prunedThrough () {
      const row = await db.selectFrom('event_sequence').select('pruned_through').where('id', '=', 1).executeTakeFirst()
      return Number(row?.pruned_through ?? 0)
    },

    async lastPosition () {
      const row = await db.selectFrom('event_sequence').select('last').where('id', '=', 1).executeTakeFirst()
      return Number(row?.last ?? 0)
    },

    // The oldest events only, a prefix of positions: what is left is always
    // every event after pruned_through. The batch is read in key order and
    // cut at the first event still young enough, so nothing is scanned
    // beyond it, and the pruned prefix and the mark commit together.
    async pruneBefore (before, limit) {
      return db.transaction().execute(async (trx) => {
        const oldest = await trx.selectFrom('event').select(['position', 'time']).orderBy('position').limit(limit).execute()
        let through: number | undefined
        for (const row of oldest) {
          if (toDate(row.time) >= before) break
          through = Number(row.position)
        }
        if (through === undefined) return 0
        const { numDeletedRows } = await trx.deleteFrom('event').where('position', '<=', position(through)).executeTakeFirst()
        await trx.updateTable('event_sequence').set({ pruned_through: position(through) }).where('id', '=', 1).execute()
        return Number(numDeletedRows)
      })
    }
  })
  return { ...reads, onCommit: outbox.onCommit }
}
