import { sql, type Kysely, type Migration } from 'kysely'
import type { Dialect } from '../database.js'

// Frozen once shipped, like every migration.

/*
 * Accounts can be disabled, and every token of an account carries the
 * account's token version: raising it ends the tokens issued before (role or
 * password changed, account disabled or deleted).
 */
export const accountLifecycle = (dialect: Dialect): Migration => ({
  async up (db: Kysely<any>) {
    await db.schema.alterTable('account').addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0)).execute()
    await db.schema.alterTable('account').addColumn('token_version', 'integer', (c) => c.notNull().defaultTo(0)).execute()
    // GET /users pages by username in byte order; PostgreSQL's unique index
    // follows the database's collation, which may not be that order.
    if (dialect === 'postgres') await sql`create index account_username_bytes on account (username collate "C")`.execute(db)
  },
  async down (db: Kysely<any>) {
    if (dialect === 'postgres') await db.schema.dropIndex('account_username_bytes').execute()
    await db.schema.alterTable('account').dropColumn('token_version').execute()
    await db.schema.alterTable('account').dropColumn('disabled').execute()
  }
})
