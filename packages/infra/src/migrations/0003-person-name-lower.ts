import { sql, type Kysely, type Migration } from 'kysely'
import type { Dialect } from '../database.js'

// Frozen once shipped, like every migration.

/*
 * `?name=` compares lower-cased text, and each database lower-cases by its
 * own tables: SQLite's lower() and LIKE fold ASCII only, its FTS5 index
 * folds by Unicode 6.1 (no lower case for Cherokee 'Ꭰ', Georgian 'Ა', …),
 * PostgreSQL follows the server's locale. So the service stores each name
 * lower-cased the way it lower-cases the needle (JavaScript's
 * toLowerCase), and the trigram indexes serve that column: one meaning of
 * "case-insensitive" on every database, and in memory.
 */

const PAGE = 1000

const backfill = async (db: Kysely<any>): Promise<void> => {
  let after = ''
  for (;;) {
    const rows: Array<{ id: string, name: string }> = await db.selectFrom('person').select(['id', 'name'])
      .where('id', '>', after).orderBy('id').limit(PAGE).execute()
    for (const { id, name } of rows) await db.updateTable('person').set({ name_lower: name.toLowerCase() }).where('id', '=', id).execute()
    const last = rows[rows.length - 1]
    if (last === undefined) return
    after = last.id
  }
}

/** The external-content FTS5 index of person names and the triggers that keep it, over `column`. */
const sqliteNameIndex = async (db: Kysely<any>, column: 'name' | 'name_lower'): Promise<void> => {
  const options = column === 'name' ? 'trigram' : 'trigram case_sensitive 1'
  await sql`create virtual table person_name using fts5(${sql.ref(column)}, content='person', content_rowid='rowid', tokenize=${sql.lit(options)})`.execute(db)
  const c = sql.ref(column)
  const old = sql.ref(`old.${column}`)
  const fresh = sql.ref(`new.${column}`)
  await sql`create trigger person_name_insert after insert on person begin
    insert into person_name(rowid, ${c}) values (new.rowid, ${fresh}); end`.execute(db)
  await sql`create trigger person_name_delete after delete on person begin
    insert into person_name(person_name, rowid, ${c}) values ('delete', old.rowid, ${old}); end`.execute(db)
  await sql`create trigger person_name_update after update of ${c} on person begin
    insert into person_name(person_name, rowid, ${c}) values ('delete', old.rowid, ${old});
    insert into person_name(rowid, ${c}) values (new.rowid, ${fresh}); end`.execute(db)
  await sql`insert into person_name(person_name) values ('rebuild')`.execute(db)
}

const dropSqliteNameIndex = async (db: Kysely<any>): Promise<void> => {
  for (const trigger of ['person_name_insert', 'person_name_delete', 'person_name_update']) {
    await sql`drop trigger if exists ${sql.ref(trigger)}`.execute(db)
  }
  await sql`drop table if exists person_name`.execute(db)
}

export const personNameLower = (dialect: Dialect): Migration => ({
  async up (db: Kysely<any>) {
    await db.schema.alterTable('person').addColumn('name_lower', 'text', (c) => c.notNull().defaultTo('')).execute()
    await backfill(db)
    if (dialect === 'postgres') {
      await sql`drop index if exists person_name_trgm`.execute(db)
      await sql`create index person_name_lower_trgm on person using gin (name_lower gin_trgm_ops)`.execute(db)
    } else {
      await dropSqliteNameIndex(db)
      await sqliteNameIndex(db, 'name_lower')
    }
  },
  async down (db: Kysely<any>) {
    if (dialect === 'postgres') {
      await sql`drop index if exists person_name_lower_trgm`.execute(db)
      await sql`create index person_name_trgm on person using gin (lower(name) gin_trgm_ops)`.execute(db)
    } else {
      await dropSqliteNameIndex(db)
    }
    await db.schema.alterTable('person').dropColumn('name_lower').execute()
    if (dialect === 'sqlite') await sqliteNameIndex(db, 'name')
  }
})
