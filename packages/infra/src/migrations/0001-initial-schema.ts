import { sql, type Kysely, type Migration } from 'kysely'
import type { Dialect } from '../database.js'

// Frozen once shipped: a change of schema is a new migration, never an edit here.
// Migrations use Kysely<any>: they describe the schema at their own point in
// history, not the application's current table types.

export const initialSchema = (dialect: Dialect): Migration => {
  const timestamp = dialect === 'postgres' ? 'timestamptz' : 'text'
  return {
    async up (db: Kysely<any>) {
      await db.schema.createTable('person')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('age', 'integer')
        .addColumn('email', 'text')
        .addColumn('has_address', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('street', 'text')
        .addColumn('city', 'text')
        .addColumn('country', 'text')
        .addColumn('created_at', timestamp, (c) => c.notNull())
        .addColumn('updated_at', timestamp, (c) => c.notNull())
        .execute()

      // Stored in both directions so "friends of X" is one index range scan
      // from either side; the primary key serves it, friend_id serves cascades.
      await db.schema.createTable('friendship')
        .addColumn('person_id', 'text', (c) => c.notNull().references('person.id').onDelete('cascade'))
        .addColumn('friend_id', 'text', (c) => c.notNull().references('person.id').onDelete('cascade'))
        .addColumn('created_at', timestamp, (c) => c.notNull())
        .addPrimaryKeyConstraint('friendship_pk', ['person_id', 'friend_id'])
        // SQLite: the rows live in the primary-key b-tree itself, so a friend
        // list is one contiguous range and each write touches one tree less.
        .$call((table) => (dialect === 'sqlite' ? table.modifyEnd(sql`without rowid`) : table))
        .execute()
      await db.schema.createIndex('friendship_friend_id').on('friendship').column('friend_id').execute()

      await db.schema.createTable('message')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('person_id', 'text', (c) => c.notNull().references('person.id').onDelete('cascade'))
        .addColumn('text', 'text', (c) => c.notNull())
        .addColumn('sender_id', 'text', (c) => c.notNull())
        .addColumn('sent_at', timestamp, (c) => c.notNull())
        .execute()
      // The inbox: one person's messages, newest first, keyset by (sent_at, id).
      await db.schema.createIndex('message_inbox').on('message')
        .columns(['person_id', 'sent_at desc', 'id desc']).execute()

      // Case-insensitive substring search on names needs a trigram index:
      // a b-tree cannot serve LIKE '%x%'.
      if (dialect === 'postgres') {
        await sql`create extension if not exists pg_trgm`.execute(db)
        await sql`create index person_name_trgm on person using gin (lower(name) gin_trgm_ops)`.execute(db)
      } else {
        await sql`create virtual table person_name using fts5(name, content='person', content_rowid='rowid', tokenize='trigram')`.execute(db)
        await sql`create trigger person_name_insert after insert on person begin
          insert into person_name(rowid, name) values (new.rowid, new.name); end`.execute(db)
        await sql`create trigger person_name_delete after delete on person begin
          insert into person_name(person_name, rowid, name) values ('delete', old.rowid, old.name); end`.execute(db)
        await sql`create trigger person_name_update after update of name on person begin
          insert into person_name(person_name, rowid, name) values ('delete', old.rowid, old.name);
          insert into person_name(rowid, name) values (new.rowid, new.name); end`.execute(db)
      }
    },
    async down (db: Kysely<any>) {
      if (dialect === 'sqlite') await sql`drop table if exists person_name`.execute(db)
      await db.schema.dropTable('message').ifExists().execute()
      await db.schema.dropTable('friendship').ifExists().execute()
      await db.schema.dropTable('person').ifExists().execute()
    }
  }
}
