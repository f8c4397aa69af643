import { DEFAULT_EVENT_SOURCE, type ChangeEvent, type PersonRepository } from '@people-service/domain'
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Database, Dialect } from '../database.js'
import { retryDeadlocks } from '../database-errors.js'
import { eventOutbox, withEvents, type EventOutbox } from '../event/event-log.js'

/*
 * Deleting a person deletes what points at them: the messages sent to them
 * by cascade, the friendships by a trigger (both directions). One statement
 * does it, and on SQLite that statement runs on the event loop: a person
 * with 200,000 messages of 1 KB held it for 1.2 s, every other request
 * with it.
 *
 * So on SQLite a person with more than a step of messages or friendships
 * loses them a step at a time, each step one transaction, a turn taken
 * before each step after the first (PersonRepository.delete's
 * beforeNextStep), then goes in the one statement with whatever is left.
 * The first step checks the expected version in its transaction: a stale
 * one deletes nothing. It writes a new version, so that a write
 * conditional on the old one fails from then on, and the deletion goes on
 * to the end.
 * Until then readers see the person with fewer messages and friends; a
 * deletion cut short (the process stopped, the database failed) leaves them
 * so, and repeating it finishes it. PostgreSQL runs the one statement off
 * the event loop, however much it deletes, atomically.
 */

/** Rows one step deletes: a few ms on SQLite whatever the rows hold (500 messages of 10,000 characters: 2.5 ms). */
export interface DeletionSteps {
  messageRows: number
  /** Friends of the person; each goes in both directions. 2,000: 3 ms. */
  friendRows: number
}

export const DELETION_STEPS: DeletionSteps = { messageRows: 500, friendRows: 2_000 }

/**
 * Without a caller's beforeNextStep, nothing more is needed for other
 * callbacks to run between steps: each step waits for its commit, which
 * comes on a later turn of the event loop (sqlite/group-commit.ts).
 */
const noWait = async (): Promise<void> => {}

type Db = Kysely<Database>

export const personDeletion = (
  db: Db, dialect: Dialect, { messageRows, friendRows }: DeletionSteps = DELETION_STEPS,
  outbox: EventOutbox = eventOutbox(dialect, DEFAULT_EVENT_SOURCE)
): PersonRepository['delete'] => {
  // Friendships and messages go by ON DELETE CASCADE and the trigger, in
  // the same statement; `only` narrows which person it may delete.
  const deleteOn = async (executor: Db, id: string, expectedVersion?: number, only?: RawBuilder<boolean>): Promise<boolean> => {
    const result = await executor.deleteFrom('person').where('id', '=', id)
      .$if(expectedVersion !== undefined, (query) => query.where('version', '=', expectedVersion as number))
      .$if(only !== undefined, (query) => query.where(only as RawBuilder<boolean>))
      .executeTakeFirst()
    return result.numDeletedRows > 0n
  }
  // The row and its events commit together, or neither.
  const deleteNow = async (events: readonly ChangeEvent[], id: string, expectedVersion?: number, only?: RawBuilder<boolean>): Promise<boolean> =>
    events.length === 0
      ? deleteOn(db, id, expectedVersion, only)
      : withEvents(db, outbox, async (trx, changes) => {
        const deleted = await deleteOn(trx, id, expectedVersion, only)
        if (deleted) for (const event of events) changes.record(event)
        return deleted
      })
  // The one statement deletes everything at once where it does not run on
  // the event loop, and inside a transaction another one cannot be begun:
  // the events are written with it, and the transaction's owner commits.
  if (db.isTransaction) {
    return async (id, expectedVersion, _beforeNextStep, events = []) => {
      if (!await deleteOn(db, id, expectedVersion)) return false
      await outbox.write(db, events)
      return true
    }
  }
  // Two friends deleted at once take their friendship's two rows in
  // opposite orders (cascade and trigger): PostgreSQL breaks the deadlock
  // by rolling one statement back, and it runs again.
  if (dialect === 'postgres') return async (id, expectedVersion, _beforeNextStep, events = []) => retryDeadlocks(() => deleteNow(events, id, expectedVersion))

  // Whether a person has a step's worth of messages or friends (each count
  // stops at a step). The sizes are written into the SQL: bound as values,
  // they made every deletion cost 80 µs more.
  const [messageStep, friendStep] = [sql.lit(messageRows), sql.lit(friendRows)]
  const stepped = sql<boolean>`(select count(*) from (select 1 from message where person_pk = person.pk limit ${messageStep})) = ${messageStep}
    or (select count(*) from (select 1 from friendship where person_pk = person.pk limit ${friendStep})) = ${friendStep}`
  // Most people have less: they go in the one statement, asked only to be so.
  const small = sql<boolean>`not (${stepped})`
  const target = async (id: string) =>
    db.selectFrom('person').select(['pk', stepped.as('stepped')]).where('id', '=', id).executeTakeFirst()

  /** Deletes a step of the person's messages and friendships; true when a whole step went, so more may be left. */
  const step = async (executor: Db, pk: number): Promise<boolean> => {
    const messages = await sql`delete from message where rowid in
      (select rowid from message where person_pk = ${pk} limit ${messageRows})`.execute(executor)
    // Both directions of each friendship in one statement, so none is left one-sided.
    const friends = await sql`delete from friendship
      where (person_pk = ${pk} and friend_pk in (select friend_pk from friendship where person_pk = ${pk} order by friend_pk limit ${friendRows}))
        or (friend_pk = ${pk} and person_pk in (select friend_pk from friendship where person_pk = ${pk} order by friend_pk limit ${friendRows}))`.execute(executor)
    return messages.numAffectedRows === BigInt(messageRows) || friends.numAffectedRows === BigInt(2 * friendRows)
  }

  return async (id, expectedVersion, beforeNextStep = noWait, events = []) => {
    if (await deleteNow(events, id, expectedVersion, small)) return true
    // Nobody, another version, or somebody with more than a step.
    const found = await target(id)
    if (found === undefined) return false
    // Another version, or one with fewer messages since: the one statement decides.
    if (!found.stepped) return deleteNow(events, id, expectedVersion)
    const { pk } = found
    const started = await db.transaction().execute(async (trx) => {
      if (expectedVersion !== undefined) {
        const [row] = await trx.selectFrom('person').select('version').where('pk', '=', pk).execute()
        if (row?.version !== expectedVersion) return undefined
      }
      // A new version, as any write makes: an edit conditional on the one
      // this deletion was (If-Match) now fails, where it had succeeded
      // between steps and then been deleted, both answered 200.
      await trx.updateTable('person').set((eb) => ({ version: eb('version', '+', 1) })).where('pk', '=', pk).execute()
      return { more: await step(trx, pk) }
    })
    if (started === undefined) return false
    for (let more = started.more; more; more = await step(db, pk)) await beforeNextStep()
    await beforeNextStep()
    return deleteNow(events, id)
  }
}
