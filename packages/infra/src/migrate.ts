import { Migrator, sql, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely'
import type { DatabaseHandle, Dialect } from './database.js'
import { initialSchema } from './migrations/0001-initial-schema.js'
import { accountsAndApiKeys } from './migrations/0002-accounts-and-api-keys.js'
import { personNameLower } from './migrations/0003-person-name-lower.js'
import { personIdName } from './migrations/0004-person-id-name.js'
import { accountLifecycle } from './migrations/0005-account-lifecycle.js'
import { personVersionAndIdempotency } from './migrations/0006-person-version-and-idempotency.js'
import { compactStorage } from './migrations/0007-compact-storage.js'
import { personPageIndex } from './migrations/0008-person-page-index.js'
import { personSummaryIndex } from './migrations/0009-person-summary-index.js'
import { activeApiKeyIndexes } from './migrations/0010-active-api-key-indexes.js'
import { accountDeleting } from './migrations/0011-account-deleting.js'
import { nameFinalSigma } from './migrations/0012-name-final-sigma.js'
import { usernameKey } from './migrations/0013-username-key.js'
import { personNameNfc } from './migrations/0014-person-name-nfc.js'
import { eventLog } from './migrations/0015-event-log.js'
import { webhooks } from './migrations/0017-webhooks.js'
import { idempotencyRecords } from './migrations/0019-idempotency-records.js'

/** Every migration in the order it runs; names are frozen once shipped. */
const migrations = (dialect: Dialect): Record<string, Migration> => ({
  '0001-initial-schema': initialSchema(dialect),
  '0002-accounts-and-api-keys': accountsAndApiKeys(dialect),
  '0003-person-name-lower': personNameLower(dialect),
  '0004-person-id-name': personIdName(dialect),
  '0005-account-lifecycle': accountLifecycle(dialect),
  '0006-person-version-and-idempotency': personVersionAndIdempotency(dialect),
  '0007-compact-storage': compactStorage(dialect),
  '0008-person-page-index': personPageIndex(dialect),
  '0009-person-summary-index': personSummaryIndex(dialect),
  '0010-active-api-key-indexes': activeApiKeyIndexes,
  '0011-account-deleting': accountDeleting,
  '0012-name-final-sigma': nameFinalSigma,
  '0013-username-key': usernameKey,
  '0014-person-name-nfc': personNameNfc,
  '0015-event-log': eventLog(dialect),
  '0017-webhooks': webhooks(dialect),
  '0019-idempotency-records': idempotencyRecords(dialect)
})

const provider = (dialect: Dialect): MigrationProvider => ({
  getMigrations: async () => migrations(dialect)
})

/** The names the first twelve migrations shipped under, before migrations were numbered. */
const DATED_NAMES: ReadonlyArray<readonly [dated: string, numbered: string]> = [
  ['2026-11-21-initial-schema', '0001-initial-schema'],
  ['2026-11-22-accounts-and-api-keys', '0002-accounts-and-api-keys'],
  ['2026-11-23-person-name-lower', '0003-person-name-lower'],
  ['2026-11-24-person-id-name', '0004-person-id-name'],
  ['2026-11-25-account-lifecycle', '0005-account-lifecycle'],
  ['2026-11-26-person-version-and-idempotency', '0006-person-version-and-idempotency'],
  ['2026-11-27-compact-storage', '0007-compact-storage'],
  ['2026-11-28-person-page-index', '0008-person-page-index'],
  ['2026-11-29-person-summary-index', '0009-person-summary-index'],
  ['2026-11-30-active-api-key-indexes', '0010-active-api-key-indexes'],
  ['2026-12-01-account-deleting', '0011-account-deleting'],
  ['2026-12-02-name-final-sigma', '0012-name-final-sigma']
]

/** Databases migrated under the dated names keep their history: the rows are renamed in place. */
const renameDatedMigrations = async (db: DatabaseHandle['db']): Promise<void> => {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true })
  if (!tables.some((table) => table.name === 'kysely_migration')) return
  // Read first: a database already renamed takes no write lock at start.
  const names = new Set((await sql<{ name: string }>`select name from kysely_migration`.execute(db)).rows.map((row) => row.name))
  for (const [dated, numbered] of DATED_NAMES) {
    if (names.has(dated)) await sql`update kysely_migration set name = ${numbered} where name = ${dated}`.execute(db)
  }
}

const migrator = async ({ db, dialect }: DatabaseHandle): Promise<Migrator> => {
  await renameDatedMigrations(db)
  return new Migrator({ db, provider: provider(dialect) })
}

/** Brings the schema up to date; safe to run from several instances at once (Kysely locks). */
export const migrateToLatest = async (handle: DatabaseHandle): Promise<MigrationResultSet> => {
  const migrations = await migrator(handle)
  // An up-to-date schema is left alone, without the migration lock's write
  // transaction; one that ran migrations this code does not know goes on to Kysely's refusal.
  const known = await migrations.getMigrations()
  if (known.every((migration) => migration.executedAt !== undefined)) {
    const ran = await sql<{ count: number | string }>`select count(*) as count from kysely_migration`.execute(handle.db)
    if (Number(ran.rows[0]?.count) === known.length) return { results: [] }
  }
  const result = await migrations.migrateToLatest()
  if (result.error) throw result.error
  return result
}

/** Moves the schema up or down to the named migration (tests of a migration; rolling back by hand). */
export const migrateTo = async (handle: DatabaseHandle, name: string): Promise<MigrationResultSet> => {
  const result = await (await migrator(handle)).migrateTo(name)
  if (result.error) throw result.error
  return result
}

export interface MigrationState {
  name: string
  /** When it ran; undefined while pending. */
  executedAt: Date | undefined
  /** Whether it can be undone (`down`). */
  reversible: boolean
}

/** Every migration this code knows, in order, with whether and when it ran. */
export const migrationStatus = async (handle: DatabaseHandle): Promise<MigrationState[]> =>
  (await (await migrator(handle)).getMigrations())
    .map(({ name, executedAt, migration }) => ({ name, executedAt, reversible: migration.down !== undefined }))

export class IrreversibleMigrationError extends Error {
  constructor (name: string) {
    super(`the migration ${name} has no down step: restore a backup instead`)
    this.name = 'IrreversibleMigrationError'
  }
}

/**
 * Undoes the last migration that ran; none ran: nothing happens. A migration
 * without `down` is refused, since Kysely would forget it without undoing it.
 */
export const migrateDown = async (handle: DatabaseHandle): Promise<MigrationResultSet> => {
  const last = (await migrationStatus(handle)).filter((m) => m.executedAt !== undefined).at(-1)
  if (last !== undefined && !last.reversible) throw new IrreversibleMigrationError(last.name)
  const result = await (await migrator(handle)).migrateDown()
  if (result.error) throw result.error
  return result
}
