import { DomainError, isRole, type Account, type AccountRepository } from '@people-service/domain'
import type { Kysely } from 'kysely'
import type { AccountRow, Database } from '../database.js'
import { isUniqueViolation, translateErrors } from '../database-errors.js'
import { toDate } from '../person/person.rows.js'

const toAccount = (row: AccountRow): Account => {
  // A role this code does not know is a broken row, not a viewer.
  if (!isRole(row.role)) throw new Error(`account ${row.id} has an unknown role`)
  return { id: row.id, username: row.username, role: row.role, passwordHash: row.password_hash, createdAt: toDate(row.created_at) }
}

export const kyselyAccountRepository = (db: Kysely<Database>): AccountRepository => translateErrors({
  async insert (account) {
    try {
      await db.insertInto('account').values({
        id: account.id,
        username: account.username,
        role: account.role,
        password_hash: account.passwordHash,
        created_at: account.createdAt.toISOString()
      }).execute()
    } catch (error) {
      if (isUniqueViolation(error)) throw new DomainError('USERNAME_TAKEN', `the username ${JSON.stringify(account.username)} is taken`, 'username')
      throw error
    }
  },

  async findById (id) {
    const row = await db.selectFrom('account').selectAll().where('id', '=', id).executeTakeFirst()
    return row && toAccount(row)
  },

  async findByUsername (username) {
    const row = await db.selectFrom('account').selectAll().where('username', '=', username).executeTakeFirst()
    return row && toAccount(row)
  }
})
