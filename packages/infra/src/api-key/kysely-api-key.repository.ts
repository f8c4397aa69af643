import { checkScopes, type ApiKey, type ApiKeyRepository } from '@people-service/domain'
import type { Kysely } from 'kysely'
import type { ApiKeyRow, Database } from '../database.js'
import { translateErrors } from '../database-errors.js'
import { toDate } from '../person/person.rows.js'

const toApiKey = (row: ApiKeyRow): ApiKey => ({
  id: row.id,
  ownerId: row.owner_id,
  name: row.name,
  scopes: checkScopes(row.scopes === '' ? [] : row.scopes.split(' ')),
  rateLimit: row.rate_limit,
  lookupId: row.lookup_id,
  secretHash: row.secret_hash,
  createdAt: toDate(row.created_at),
  revokedAt: row.revoked_at === null ? null : toDate(row.revoked_at)
})

export const kyselyApiKeyRepository = (db: Kysely<Database>): ApiKeyRepository => translateErrors({
  async insert (key) {
    await db.insertInto('api_key').values({
      id: key.id,
      owner_id: key.ownerId,
      name: key.name,
      scopes: key.scopes.join(' '),
      rate_limit: key.rateLimit,
      lookup_id: key.lookupId,
      secret_hash: key.secretHash,
      created_at: key.createdAt.toISOString(),
      revoked_at: key.revokedAt?.toISOString() ?? null
    }).execute()
  },

  async findById (id) {
    const row = await db.selectFrom('api_key').selectAll().where('id', '=', id).executeTakeFirst()
    return row && toApiKey(row)
  },

  async findByLookupId (lookupId) {
    const row = await db.selectFrom('api_key').selectAll().where('lookup_id', '=', lookupId).executeTakeFirst()
    return row && toApiKey(row)
  },

  async listActive ({ ownerId, limit, after }) {
    let query = db.selectFrom('api_key').selectAll().where('revoked_at', 'is', null)
    if (ownerId !== undefined) query = query.where('owner_id', '=', ownerId)
    // One row-value comparison, which the active-key indexes seek to (as the inbox's).
    if (after !== undefined) query = query.where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(after.at.toISOString(), after.id)))
    const rows = await query.orderBy('created_at').orderBy('id').limit(limit).execute()
    return rows.map(toApiKey)
  },

  // Through the active-key index of the owner (migration 0010).
  async countActive (ownerId) {
    const row = await db.selectFrom('api_key').select((eb) => eb.fn.countAll<number | string>().as('count'))
      .where('owner_id', '=', ownerId).where('revoked_at', 'is', null).executeTakeFirstOrThrow()
    return Number(row.count)
  },

  async revoke (id, at) {
    const result = await db.updateTable('api_key')
      .set({ revoked_at: at.toISOString() })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  }
})
