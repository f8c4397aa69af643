import type { ApiKeyUsageRepository } from '@people-service/domain'
import type { Kysely } from 'kysely'
import type { Database, Dialect } from '../database.js'
import { translateErrors } from '../database-errors.js'
import { boundIds, idsIn } from '../sql-dialect.js'

export const kyselyApiKeyUsageRepository = (db: Kysely<Database>, dialect: Dialect): ApiKeyUsageRepository => translateErrors({
  // One statement per flush: instances add to the same rows concurrently, so
  // the increment happens in the database, never read-modify-write here.
  async add (counts) {
    if (counts.length === 0) return
    // Counts of a key deleted since (with its account) would fail the foreign
    // key, and with it every later flush that still carries them: only the
    // keys that exist are written. A key deleted between the two statements
    // fails this flush once; the next one finds it gone.
    const keyIds = [...new Set(counts.map(({ keyId }) => keyId))]
    const existing = await db.selectFrom('api_key').select('id').where(idsIn(dialect, 'api_key.id', boundIds(dialect, keyIds))).execute()
    const kept = new Set(existing.map(({ id }) => id))
    const rows = counts.filter(({ keyId }) => kept.has(keyId))
    if (rows.length === 0) return
    await db.insertInto('api_key_usage')
      .values(rows.map(({ keyId, day, requests }) => ({ key_id: keyId, day, requests })))
      .onConflict((conflict) => conflict.columns(['key_id', 'day']).doUpdateSet((eb) => ({
        requests: eb('api_key_usage.requests', '+', eb.ref('excluded.requests'))
      })))
      .execute()
  },

  async byDay (keyId) {
    const rows = await db.selectFrom('api_key_usage').select(['day', 'requests']).where('key_id', '=', keyId).orderBy('day').execute()
    return rows.map(({ day, requests }) => ({ day, requests: Number(requests) }))
  }
})
