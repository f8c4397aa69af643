import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import { sql } from 'kysely'
import { createDatabase, createRepositories, migrationStatus } from '@people-service/infra'

/** The command `npm run migrate` runs once the build is done. */
export const MIGRATE = fileURLToPath(new URL('../dist/migrate.js', import.meta.url))

export const migrate = (databaseUrl: string, args: string[]) => {
  const result = spawnSync(process.execPath, [MIGRATE, ...args], { env: { ...process.env, DATABASE_URL: databaseUrl }, encoding: 'utf8', timeout: 60_000 })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, lines: result.stdout.trim().split('\n') }
}

const withDatabase = async <T>(url: string, use: (handle: ReturnType<typeof createDatabase>) => Promise<T>): Promise<T> => {
  const handle = createDatabase({ url })
  try {
    return await use(handle)
  } finally {
    await handle.close()
  }
}

/** The service's own tables: what is left besides Kysely's bookkeeping. */
const tablesOf = (url: string): Promise<string[]> => withDatabase(url, async (handle) => {
  const { rows } = handle.dialect === 'sqlite'
    ? await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(handle.db)
    : await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(handle.db)
  return rows.map((row) => row.name).filter((name) => !name.startsWith('kysely_')).sort()
})

const pending = (url: string): Promise<string[]> => withDatabase(url, async (handle) =>
  (await migrationStatus(handle)).filter((m) => m.executedAt === undefined).map((m) => m.name))

/**
 * status, up and down as a user runs them, on the empty database of `url`:
 * down through every migration, then up again to a schema that serves.
 */
export const checkMigrateCommand = async (t: Test, url: string): Promise<void> => {
  const fresh = migrate(url, ['status'])
  t.equal(fresh.status, 0, fresh.stderr)
  const names = fresh.lines.map((line) => line.split(/\s+/)[0] as string)
  t.ok(names.length >= 4, 'every migration is listed')
  t.same(fresh.lines.map((line) => line.split(/\s+/).slice(1).join(' ')), names.map(() => 'pending'))

  t.same(migrate(url, ['up']).lines, names.map((name) => `applied ${name}`))
  const applied = migrate(url, ['status']).lines
  t.ok(applied.every((line) => /^\S+\s+applied \d{4}-\d\d-\d\dT[\d:.]+Z$/.test(line)), applied.join('\n'))
  t.same(migrate(url, ['up']).lines, ['nothing to apply: the schema is up to date'])
  const everyTable = await tablesOf(url)
  t.ok(everyTable.includes('person') && everyTable.includes('friendship'), everyTable.join(', '))

  for (const [index, name] of [...names.entries()].reverse()) {
    const down = migrate(url, ['down'])
    t.equal(down.status, 0, down.stderr)
    t.same(down.lines, [`undid ${name}`])
    t.same(await pending(url), names.slice(index), `${name} is pending again, and only what came after it`)
  }
  t.same(await tablesOf(url), [], 'every table the migrations made is gone')
  t.same(migrate(url, ['down']).lines, ['nothing to undo: no migration is applied'])

  t.equal(migrate(url, ['up']).status, 0)
  t.same(await tablesOf(url), everyTable)
  await withDatabase(url, async (handle) => {
    t.ok((await migrationStatus(handle)).every((m) => m.executedAt !== undefined && m.reversible))
    const { people } = createRepositories(handle)
    const now = new Date()
    const person = { id: '0192f6c4-0000-7000-8000-000000000001', name: 'Ada', age: null, email: null, address: null, createdAt: now, updatedAt: now, version: 1 }
    await people.insert(person)
    t.same((await people.list({ limit: 10, nameContains: 'ada' })).map((p) => p.id), [person.id], 'the schema, rebuilt, serves')
  })
}
