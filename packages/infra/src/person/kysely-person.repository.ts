import type { PersonRepository } from '@people-service/domain'
import type { Kysely } from 'kysely'
import type { Database, Dialect } from '../database.js'
import { translateErrors } from '../database-errors.js'
import { nameContains } from '../sql-dialect.js'
import { toPerson, toPersonRow } from './person.rows.js'

export const kyselyPersonRepository = (db: Kysely<Database>, dialect: Dialect): PersonRepository => translateErrors({
  async findById (id) {
    const row = await db.selectFrom('person').selectAll().where('id', '=', id).executeTakeFirst()
    return row && toPerson(row)
  },

  async findByIds (ids) {
    if (ids.length === 0) return []
    const rows = await db.selectFrom('person').selectAll().where('id', 'in', ids).execute()
    return rows.map(toPerson)
  },

  async list ({ limit, afterId, nameContains: needle }) {
    let query = db.selectFrom('person').select(['person.id', 'person.name'])
    if (afterId !== undefined) query = query.where('person.id', '>', afterId)
    if (needle !== undefined) query = query.where(nameContains(dialect, needle))
    return query.orderBy('person.id').limit(limit).execute()
  },

  async insert (person) {
    await db.insertInto('person').values(toPersonRow(person)).execute()
  },

  async update (person) {
    const { id, created_at: _createdAt, ...fields } = toPersonRow(person)
    const result = await db.updateTable('person').set(fields).where('id', '=', id).executeTakeFirst()
    return result.numUpdatedRows > 0n
  },

  // Friendships and messages go by ON DELETE CASCADE, in the same statement.
  async delete (id) {
    const result = await db.deleteFrom('person').where('id', '=', id).executeTakeFirst()
    return result.numDeletedRows > 0n
  }
})
