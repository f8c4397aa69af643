import type { Kysely, Migration } from 'kysely'

// Frozen once shipped, like every migration.

/*
 * An account deleted in steps (on SQLite, one with very many keys) is
 * disabled in the deletion's first transaction and marked as being deleted,
 * so that no admin can enable it again before the last one: enabled, it
 * could act, become the last admin and be refused deletion after its keys
 * had gone.
 */
export const accountDeleting: Migration = {
  async up (db: Kysely<any>) {
    await db.schema.alterTable('account').addColumn('deleting', 'integer', (c) => c.notNull().defaultTo(0)).execute()
  },
  async down (db: Kysely<any>) {
    await db.schema.alterTable('account').dropColumn('deleting').execute()
  }
}
