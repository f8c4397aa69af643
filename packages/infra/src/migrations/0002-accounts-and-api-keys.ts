import type { Kysely, Migration } from 'kysely'
import type { Dialect } from '../database.js'

// Frozen once shipped, like every migration.

export const accountsAndApiKeys = (dialect: Dialect): Migration => {
  const timestamp = dialect === 'postgres' ? 'timestamptz' : 'text'
  return {
    async up (db: Kysely<any>) {
      await db.schema.createTable('account')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('username', 'text', (c) => c.notNull().unique())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', timestamp, (c) => c.notNull())
        .execute()

      // Revoked keys stay: messages name them as senders, usage stays readable.
      await db.schema.createTable('api_key')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('owner_id', 'text', (c) => c.notNull().references('account.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('scopes', 'text', (c) => c.notNull())
        .addColumn('rate_limit', 'integer')
        .addColumn('lookup_id', 'text', (c) => c.notNull().unique())
        .addColumn('secret_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', timestamp, (c) => c.notNull())
        .addColumn('revoked_at', timestamp)
        .execute()
      // Listings: one owner's keys (or everyone's) oldest first.
      await db.schema.createIndex('api_key_owner').on('api_key').columns(['owner_id', 'created_at', 'id']).execute()
      await db.schema.createIndex('api_key_created').on('api_key').columns(['created_at', 'id']).execute()

      await db.schema.createTable('api_key_usage')
        .addColumn('key_id', 'text', (c) => c.notNull().references('api_key.id'))
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('requests', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('api_key_usage_pk', ['key_id', 'day'])
        .execute()

      await db.schema.createTable('service_setting')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('created_at', timestamp, (c) => c.notNull())
        .execute()
    },
    async down (db: Kysely<any>) {
      await db.schema.dropTable('service_setting').ifExists().execute()
      await db.schema.dropTable('api_key_usage').ifExists().execute()
      await db.schema.dropTable('api_key').ifExists().execute()
      await db.schema.dropTable('account').ifExists().execute()
    }
  }
}
