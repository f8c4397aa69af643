import { Migrator, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely'
import type { DatabaseHandle, Dialect } from './database.js'
import { initialSchema } from './migrations/2026-11-21-initial-schema.js'
import { accountsAndApiKeys } from './migrations/2026-11-22-accounts-and-api-keys.js'
import { personNameLower } from './migrations/2026-11-23-person-name-lower.js'
import { personIdName } from './migrations/2026-11-24-person-id-name.js'
import { accountLifecycle } from './migrations/2026-11-25-account-lifecycle.js'
import { personVersionAndIdempotency } from './migrations/2026-11-26-person-version-and-idempotency.js'
import { compactStorage } from './migrations/2026-11-27-compact-storage.js'
import { personPageIndex } from './migrations/2026-11-28-person-page-index.js'
import { personSummaryIndex } from './migrations/2026-11-29-person-summary-index.js'
import { activeApiKeyIndexes } from './migrations/2026-11-30-active-api-key-indexes.js'
import { accountDeleting } from './migrations/2026-12-01-account-deleting.js'
import { nameFinalSigma } from './migrations/2026-12-02-name-final-sigma.js'

/** Every migration in the order it runs; names are frozen once shipped. */
const migrations = (dialect: Dialect): Record<string, Migration> => ({
  '2026-11-21-initial-schema': initialSchema(dialect),
  '2026-11-22-accounts-and-api-keys': accountsAndApiKeys(dialect),
  '2026-11-23-person-name-lower': personNameLower(dialect),
  '2026-11-24-person-id-name': personIdName(dialect),
  '2026-11-25-account-lifecycle': accountLifecycle(dialect),
  '2026-11-26-person-version-and-idempotency': personVersionAndIdempotency(dialect),
  '2026-11-27-compact-storage': compactStorage(dialect),
  '2026-11-28-person-page-index': personPageIndex(dialect),
  '2026-11-29-person-summary-index': personSummaryIndex(dialect),
  '2026-11-30-active-api-key-indexes': activeApiKeyIndexes,
  '2026-12-01-account-deleting': accountDeleting,
  '2026-12-02-name-final-sigma': nameFinalSigma
})

const provider = (dialect: Dialect): MigrationProvider => ({
  getMigrations: async () => migrations(dialect)
})

/** Brings the schema up to date; safe to run from several instances at once (Kysely locks). */
export const migrateToLatest = async ({ db, dialect }: DatabaseHandle): Promise<MigrationResultSet> => {
  const result = await new Migrator({ db, provider: provider(dialect) }).migrateToLatest()
  if (result.error) throw result.error
  return result
}

/** Moves the schema up or down to the named migration (tests of a migration; rolling back by hand). */
export const migrateTo = async ({ db, dialect }: DatabaseHandle, name: string): Promise<MigrationResultSet> => {
  const result = await new Migrator({ db, provider: provider(dialect) }).migrateTo(name)
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
export const migrationStatus = async ({ db, dialect }: DatabaseHandle): Promise<MigrationState[]> =>
  (await new Migrator({ db, provider: provider(dialect) }).getMigrations())
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
  const result = await new Migrator({ db: handle.db, provider: provider(handle.dialect) }).migrateDown()
  if (result.error) throw result.error
  return result
}
