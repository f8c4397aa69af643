import type { AccountRepository } from '@people-service/domain'
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Database, Dialect } from '../database.js'

/*
 * Deleting an account deletes its API keys and their usage, revoked keys
 * included (they stay in the table until then). Keys cost their owner one
 * request each, so an editor's budget makes 100,000 in under two hours;
 * deleting such an account in its one transaction held SQLite, and the
 * event loop with it, for 314 ms (500,000: 2.6 s).
 *
 * So on SQLite an account with a step or more of keys or usage rows is not
 * deleted in its transaction: `deleteNow` answers false and deletes
 * nothing. The use case then disables it in that transaction (its tokens
 * and keys stop at once), `shedKeys` deletes its keys a step at a time,
 * each step its own transaction, and the account goes in a last one. Until
 * then admins see it disabled, with fewer keys; a deletion cut short leaves
 * it so, and deleting again finishes it. PostgreSQL deletes everything in
 * the one transaction, off the event loop.
 */

/**
 * Rows one step deletes. A key's rows sit at random places of the lookup
 * index, and most of a step's time is its commit writing them: 250 keys
 * with their usage took 5–16 ms a step. 50 take 1–3 ms, 20–60 ms when the
 * commit checkpoints the WAL. Over HTTP, while an account of 100,000 keys
 * went (13 s), other requests waited 16.5 ms at p99 and 32 ms at most.
 */
export interface AccountDeletionSteps {
  /** Usage rows (a key has one a day it was used). */
  usageRows: number
  /** Keys, once their usage has gone. */
  keyRows: number
}

export const ACCOUNT_DELETION_STEPS: AccountDeletionSteps = { usageRows: 100, keyRows: 50 }

type Db = Kysely<Database>

const noWait = async (): Promise<void> => {}

export const accountDeletion = (dialect: Dialect, { usageRows, keyRows }: AccountDeletionSteps = ACCOUNT_DELETION_STEPS) => {
  // Whether an account has a step's worth of keys or usage (each count
  // stops at a step), the sizes written into the SQL as person-deletion.ts
  // does.
  const [usageStep, keyStep] = [sql.lit(usageRows), sql.lit(keyRows)]
  const stepped = (id: string): RawBuilder<boolean> => sql<boolean>`
    (select count(*) from (select 1 from api_key where owner_id = ${id} limit ${keyStep})) = ${keyStep}
    or (select count(*) from (select 1 from api_key_usage join api_key on api_key.id = api_key_usage.key_id
      where api_key.owner_id = ${id} limit ${usageStep})) = ${usageStep}`

  const keysOf = (db: Db, id: string) => db.selectFrom('api_key').select('id').where('owner_id', '=', id)
  // The account's first keys, in the order of its index: the same step's
  // worth in both statements of a step, nothing scanned past it.
  const firstKeysOf = (db: Db, id: string) => keysOf(db, id).orderBy('created_at').orderBy('id').limit(keyRows)

  /**
   * Deletes a step of usage rows of the account's first keys or, once they
   * have none, those keys; true when a whole step went, so more may be left.
   */
  const step = async (db: Db, id: string): Promise<boolean> => {
    const usage = await db.deleteFrom('api_key_usage')
      .where((eb) => eb(eb.refTuple('key_id', 'day'), 'in',
        eb.selectFrom('api_key_usage').select(['key_id', 'day']).where('key_id', 'in', firstKeysOf(db, id)).limit(usageRows)
          .$asTuple('key_id', 'day')))
      .executeTakeFirst()
    if (usage.numDeletedRows === BigInt(usageRows)) return true
    const keys = await db.deleteFrom('api_key').where('id', 'in', firstKeysOf(db, id)).executeTakeFirst()
    return keys.numDeletedRows === BigInt(keyRows)
  }

  return {
    /**
     * Inside an account change's transaction: deletes the account with its
     * keys and their usage, and answers true; on SQLite, when that is a
     * step or more, deletes nothing and answers false.
     */
    async deleteNow (trx: Db, id: string): Promise<boolean> {
      if (dialect === 'sqlite') {
        const { rows: [row] } = await sql<{ big: number }>`select ${stepped(id)} as big`.execute(trx)
        if (row?.big !== 0) return false
      }
      await trx.deleteFrom('api_key_usage').where('key_id', 'in', keysOf(trx, id)).execute()
      await trx.deleteFrom('api_key').where('owner_id', '=', id).execute()
      await trx.deleteFrom('account').where('id', '=', id).execute()
      return true
    },

    /** Outside any transaction: the account's keys and usage, a step per transaction (AccountRepository.shedKeys). */
    shedKeys: (db: Db): AccountRepository['shedKeys'] => async (id, beforeNextStep = noWait) => {
      while (await db.transaction().execute((trx) => step(trx, id))) await beforeNextStep()
    }
  }
}
