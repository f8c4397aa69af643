import { DEFAULT_EVENT_SOURCE, DomainError, isRole, usernameKey, type Account, type AccountChangeSet, type AccountRepository } from '@people-service/domain'
import { sql, type Kysely, type Transaction } from 'kysely'
import type { AccountRow, Database, Dialect } from '../database.js'
import { isUniqueViolation, translateErrors } from '../database-errors.js'
import { toDate } from '../person/person.rows.js'
import { accountDeletion, type AccountDeletionSteps } from './account-deletion.js'
import { eventOutbox, withEvents, type EventOutbox } from '../event/event-log.js'

type AccountDeletion = ReturnType<typeof accountDeletion>

const toAccount = (row: AccountRow): Account => {
  // A role this code does not know is a broken row, not a viewer.
  if (!isRole(row.role)) throw new Error(`account ${row.id} has an unknown role`)
  return {
    id: row.id,
    username: row.username,
    role: row.role,
    passwordHash: row.password_hash,
    disabled: row.disabled !== 0,
    tokenVersion: row.token_version,
    deleting: row.deleting !== 0,
    createdAt: toDate(row.created_at)
  }
}

const findById = async (db: Kysely<Database>, id: string): Promise<Account | undefined> => {
  const row = await db.selectFrom('account').selectAll().where('id', '=', id).executeTakeFirst()
  return row && toAccount(row)
}

const insert = async (db: Kysely<Database>, account: Account): Promise<void> => {
  try {
    await db.insertInto('account').values({
      id: account.id,
      username: account.username,
      username_key: usernameKey(account.username),
      role: account.role,
      password_hash: account.passwordHash,
      disabled: account.disabled ? 1 : 0,
      token_version: account.tokenVersion,
      deleting: account.deleting ? 1 : 0,
      created_at: account.createdAt.toISOString()
    }).execute()
  } catch (error) {
    if (isUniqueViolation(error)) throw new DomainError('USERNAME_TAKEN', `the username ${JSON.stringify(account.username)} is taken`, 'username')
    throw error
  }
}

const changeSetOf = (trx: Transaction<Database>, deletion: AccountDeletion, changes: AccountChangeSet['changes']): AccountChangeSet => ({
  changes,
  insert: (account) => insert(trx, account),
  findById: (id) => findById(trx, id),

  async countEnabledAdmins () {
    const { count } = await trx.selectFrom('account')
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .where('role', '=', 'admin').where('disabled', '=', 0)
      .executeTakeFirstOrThrow()
    return Number(count)
  },

  async update (account) {
    await trx.updateTable('account').set({
      role: account.role,
      disabled: account.disabled ? 1 : 0,
      password_hash: account.passwordHash,
      token_version: account.tokenVersion,
      deleting: account.deleting ? 1 : 0
    }).where('id', '=', account.id).execute()
  },

  delete: (id) => deletion.deleteNow(trx, id)
})

export const kyselyAccountRepository = (
  db: Kysely<Database>, dialect: Dialect, steps?: AccountDeletionSteps, outbox: EventOutbox = eventOutbox(dialect, DEFAULT_EVENT_SOURCE)
): AccountRepository => {
  const deletion = accountDeletion(dialect, steps)
  // Byte order on both databases: SQLite compares text that way; PostgreSQL
  // would follow the database's collation (an index matches this expression).
  const username = dialect === 'postgres' ? sql<string>`username collate "C"` : sql<string>`username`

  return translateErrors({
    insert: (account) => insert(db, account),

    findById: (id) => findById(db, id),

    async findByUsername (name) {
      const row = await db.selectFrom('account').selectAll().where('username_key', '=', usernameKey(name)).executeTakeFirst()
      return row && toAccount(row)
    },

    async list ({ afterUsername, limit }) {
      let query = db.selectFrom('account').selectAll()
      if (afterUsername !== undefined) query = query.where(username, '>', afterUsername)
      return (await query.orderBy(username).limit(limit).execute()).map(toAccount)
    },

    shedKeys: deletion.shedKeys(db),

    changeExclusively (work) {
      return withEvents(db, outbox, async (trx, changes) => {
        // SQLite runs one explicit transaction at a time already. PostgreSQL
        // would let two read the same admins and both demote one: this lock
        // makes account writes wait, while plain reads (logins) go on.
        if (dialect === 'postgres') await sql`lock table account in exclusive mode`.execute(trx)
        return work(changeSetOf(trx as Transaction<Database>, deletion, changes))
      })
    }
  })
}
