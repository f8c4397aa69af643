import type { ApiKeyUsageRepository } from '@people-service/domain'
import type { Kysely } from 'kysely'
import type { Database } from '../database.js'
import { translateErrors } from '../database-errors.js'

export const kyselyApiKeyUsageRepository = (db: Kysely<Database>): ApiKeyUsageRepository => translateErrors({
  // One statement per flush: instances add to the same rows concurrently, so
  // the increment happens in the database, never read-modify-write here.
  async add (counts) {
    if (counts.length === 0) return
    await db.insertInto('api_key_usage')
      .values(counts.map(({ keyId, day, requests }) => ({ key_id: keyId, day, requests })))
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
