import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { createDatabase, migrateToLatest, type DatabaseHandle } from '@people-service/infra'
import type { Teardown } from '@people-service/infra/testing'

/** A migrated database in a fresh SQLite file, removed when the test ends. */
export const sqliteFile = async (t: Teardown): Promise<DatabaseHandle & { path: string }> => {
  const dir = mkdtempSync(join(tmpdir(), 'people-service-'))
  const path = join(dir, 'people.db')
  const handle = createDatabase({ url: `sqlite:${path}` })
  await migrateToLatest(handle)
  t.teardown(async () => {
    await handle.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return { ...handle, path }
}

/** Every index, trigger and constraint, as the database states its definition; whether SQLite checks foreign keys. */
export const schemaOf = async ({ db, dialect }: DatabaseHandle): Promise<string[]> => {
  const { rows } = dialect === 'sqlite'
    ? await sql<{ definition: string }>`select sql as definition from sqlite_master where type in ('index', 'trigger') and sql is not null
        union all select 'foreign_keys = ' || foreign_keys from pragma_foreign_keys`.execute(db)
    : await sql<{ definition: string }>`select indexdef as definition from pg_indexes where schemaname = current_schema()
        union all select conname || ' ' || pg_get_constraintdef(oid) || case when convalidated then '' else ' not valid' end
          from pg_constraint where connamespace = current_schema()::regnamespace`.execute(db)
  return rows.map((row) => row.definition).sort()
}

/**
 * What `work` resolves to, and how many turns of the event loop other
 * callbacks had meanwhile (an immediate that schedules itself again): a
 * SQLite statement answers at once, so work that never gives way runs
 * whole before any of them.
 */
export const turnsDuring = async <T>(work: () => Promise<T>): Promise<{ result: T, turns: number }> => {
  let working = true
  let turns = 0
  const tick = (): void => {
    if (!working) return
    turns++
    setImmediate(tick)
  }
  setImmediate(tick)
  try {
    return { result: await work(), turns }
  } finally {
    working = false
  }
}
