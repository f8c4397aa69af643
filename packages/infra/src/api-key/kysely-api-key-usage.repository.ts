import type { ApiKeyUsageRepository, UsageCount } from '@people-service/domain'
import { sql, type Kysely } from 'kysely'
import type { Database, Dialect } from '../database.js'
import { translateErrors } from '../database-errors.js'

/**
 * The counts as ONE parameter (JSON), read back as rows by the database:
 * a statement holds any number of counts, never a parameter per value
 * (SQLite refuses more than 32,766 of them, PostgreSQL 65,535), and it is
 * prepared once whatever their number.
 */
const countRows = (dialect: Dialect, counts: readonly UsageCount[]) => {
  const json = JSON.stringify(counts.map(({ keyId, day, requests }) => ({ k: keyId, d: day, n: requests })))
  return dialect === 'postgres'
    ? sql`select c.k as key_id, c.d as day, c.n as requests from jsonb_to_recordset(${json}::jsonb) as c(k text, d text, n integer)`
    : sql`select json_extract(c.value, '$.k') as key_id, json_extract(c.value, '$.d') as day, json_extract(c.value, '$.n') as requests from json_each(${json}) c`
}

export const kyselyApiKeyUsageRepository = (db: Kysely<Database>, dialect: Dialect): ApiKeyUsageRepository => translateErrors({
  // One statement per call: instances add to the same rows concurrently, so
  // the increment happens in the database, never read-modify-write here.
  // Counts of a key deleted since (with its account) would fail the foreign
  // key, and with it every later flush that still carries them: the same
  // statement keeps only the keys that exist.
  async add (counts) {
    if (counts.length === 0) return
    await sql`insert into api_key_usage (key_id, day, requests)
      select c.key_id, c.day, c.requests from (${countRows(dialect, counts)}) c
      where exists (select 1 from api_key k where k.id = c.key_id)
      on conflict (key_id, day) do update set requests = api_key_usage.requests + excluded.requests`.execute(db)
  },

  async byDay (keyId) {
    const rows = await db.selectFrom('api_key_usage').select(['day', 'requests']).where('key_id', '=', keyId).orderBy('day').execute()
    return rows.map(({ day, requests }) => ({ day, requests: Number(requests) }))
  }
})
