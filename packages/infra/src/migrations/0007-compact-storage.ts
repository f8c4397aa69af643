import { sql, type Kysely, type Migration } from 'kysely'
import type { Dialect } from '../database.js'

// Frozen once shipped, like every migration.

/*
 * Compact storage. At 1M people with 20 friends each the file was 4.1 GB,
 * most of it the friendship table and its friend_id index on 36-character
 * text keys. Now:
 * - person gets an integer key `pk` used inside the database only; the
 *   public UUIDv7 `id` stays, unique, and is all the domain ever sees.
 *   Keys are handed out in id order, so ordering by pk is ordering by
 *   creation, as ordering by UUIDv7 ids was.
 * - friendship is (person_pk, friend_pk), without created_at (never read)
 *   and without the friend_id index: every friendship is stored in both
 *   directions, so the rows pointing at a deleted person are found from the
 *   person's own rows, by a trigger, through the primary key.
 * - message points at its recipient by person_pk.
 *
 * The old tables are renamed out of the way, the new ones created under the
 * final names and filled by INSERT … SELECT, then the old ones dropped.
 * PostgreSQL runs a migration in one transaction; on SQLite Kysely runs
 * migrations statement by statement, so the rebuild runs in a transaction of
 * its own. Foreign keys stay on: SQLite cannot switch them inside a
 * transaction, and they need not be off, since the old children are dropped
 * before the old parent (no cascade runs) and the new rows are checked
 * against the new parent as they go in. `foreign_key_check` confirms it.
 */

type Db = Kysely<any>

const PERSON_COLUMNS = 'id, name, name_lower, age, email, has_address, street, city, country, created_at, updated_at, version'

const run = async (db: Db, statements: string[]): Promise<void> => {
  for (const statement of statements) await sql.raw(statement).execute(db)
}

/** SQLite: one transaction for the rebuild; PostgreSQL: the migrator's own. */
const atomically = async (db: Db, dialect: Dialect, work: (db: Db) => Promise<void>): Promise<void> => {
  if (dialect === 'sqlite') await db.transaction().execute(work)
  else await work(db)
}

const checkForeignKeys = async (db: Db, dialect: Dialect): Promise<void> => {
  if (dialect !== 'sqlite') return
  const { rows } = await sql<{ table: string, parent: string }>`pragma foreign_key_check`.execute(db)
  if (rows.length > 0) throw new Error(`foreign keys broken by the migration: ${JSON.stringify(rows.slice(0, 5))}`)
}

/** The trigram index of lower-cased names and, on SQLite, the triggers that keep it, keyed by `key`. */
const nameIndex = (dialect: Dialect, key: 'pk' | 'rowid'): string[] => dialect === 'postgres'
  ? ['create index person_name_lower_trgm on person using gin (name_lower gin_trgm_ops)']
  : [
      `create virtual table person_name using fts5(name_lower, content='person', content_rowid='${key}', tokenize='trigram case_sensitive 1')`,
      `create trigger person_name_insert after insert on person begin
        insert into person_name(rowid, name_lower) values (new.${key}, new.name_lower); end`,
      `create trigger person_name_delete after delete on person begin
        insert into person_name(person_name, rowid, name_lower) values ('delete', old.${key}, old.name_lower); end`,
      `create trigger person_name_update after update of name_lower on person begin
        insert into person_name(person_name, rowid, name_lower) values ('delete', old.${key}, old.name_lower);
        insert into person_name(rowid, name_lower) values (new.${key}, new.name_lower); end`,
      "insert into person_name(person_name) values ('rebuild')"
    ]

const dropNameIndex = (dialect: Dialect): string[] => dialect === 'postgres'
  ? ['drop index person_name_lower_trgm']
  : ['person_name_insert', 'person_name_delete', 'person_name_update'].map((name) => `drop trigger ${name}`)
      .concat('drop table person_name')

/** The tables rebuilt, children first: dropped in this order, no cascade runs. */
const TABLES = ['message', 'friendship', 'person'] as const

/** Drops the tables renamed aside, children first. */
const dropAside = (suffix: string): string[] => TABLES.map((table) => `drop table ${table}_${suffix}`)

/**
 * Renames person, friendship and message to `<name>_<suffix>`; on
 * PostgreSQL also the indexes behind their keys, whose names are
 * schema-wide and wanted by the new tables. (SQLite renames its automatic
 * indexes with the table.)
 */
const renameAside = (dialect: Dialect, suffix: string): string[] => TABLES.flatMap((table) => [
  `alter table ${table} rename to ${table}_${suffix}`,
  ...(dialect === 'postgres'
    ? [`alter index ${table === 'friendship' ? 'friendship_pk' : `${table}_pkey`} rename to ${table}_${suffix}_key`]
    : [])
])

const deleteFriendshipsTrigger = (dialect: Dialect): string[] => {
  // The rows pointing at the deleted person, found from the person's own
  // (mirror) rows through the primary key; the person's own rows go by cascade.
  const body = `delete from friendship where friend_pk = old.pk
    and person_pk in (select friend_pk from friendship where person_pk = old.pk)`
  return dialect === 'postgres'
    ? [
        `create function person_delete_friendships() returns trigger language plpgsql as $$
          begin ${body}; return old; end $$`,
        `create trigger person_delete_friendships before delete on person
          for each row execute function person_delete_friendships()`
      ]
    : [`create trigger person_delete_friendships before delete on person begin ${body}; end`]
}

export const compactStorage = (dialect: Dialect): Migration => {
  const timestamp = dialect === 'postgres' ? 'timestamptz' : 'text'
  const postgres = dialect === 'postgres'
  return {
    async up (db: Db) {
      await atomically(db, dialect, async (db) => {
        await run(db, [
          ...dropNameIndex(dialect),
          'drop index message_inbox',
          'drop index friendship_friend_id',
          'drop index person_id_name',
          ...renameAside(dialect, 'previous'),
          `create table person (
            pk integer ${postgres ? 'generated by default as identity primary key' : 'primary key'},
            id text not null,
            name text not null,
            name_lower text not null default '',
            age integer,
            email text,
            has_address integer not null default 0,
            street text,
            city text,
            country text,
            created_at ${timestamp} not null,
            updated_at ${timestamp} not null,
            version integer not null default 1
          )`,
          `create table friendship (
            person_pk integer not null references person (pk) on delete cascade,
            friend_pk integer not null,
            constraint friendship_pk primary key (person_pk, friend_pk)
          )${postgres ? '' : ' without rowid'}`,
          `create table message (
            id text primary key,
            person_pk integer not null references person (pk) on delete cascade,
            text text not null,
            sender_id text not null,
            sent_at ${timestamp} not null
          )`,
          // Keys in id order: creation order for UUIDv7 ids.
          postgres
            ? `insert into person (pk, ${PERSON_COLUMNS}) overriding system value
                select row_number() over (order by id), ${PERSON_COLUMNS} from person_previous`
            : `insert into person (${PERSON_COLUMNS}) select ${PERSON_COLUMNS} from person_previous order by id`,
          ...(postgres ? ["select setval(pg_get_serial_sequence('person', 'pk'), (select coalesce(max(pk), 0) + 1 from person), false)"] : []),
          'create unique index person_id_unique on person (id)',
          `insert into friendship (person_pk, friend_pk)
            select p.pk, f.pk from friendship_previous x
            join person p on p.id = x.person_id
            join person f on f.id = x.friend_id`,
          `insert into message (id, person_pk, text, sender_id, sent_at)
            select m.id, p.pk, m.text, m.sender_id, m.sent_at from message_previous m
            join person p on p.id = m.person_id`,
          ...dropAside('previous'),
          // The inbox: one person's messages, newest first, keyset by (sent_at, id); it serves the cascade too.
          'create index message_inbox on message (person_pk, sent_at desc, id desc)',
          ...nameIndex(dialect, 'pk'),
          ...deleteFriendshipsTrigger(dialect)
        ])
        await checkForeignKeys(db, dialect)
      })
    },

    // The previous schema, every row back; friendship.created_at, never
    // read and not kept, becomes the time of the rollback.
    async down (db: Db) {
      const now = postgres ? 'now()' : "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"
      await atomically(db, dialect, async (db) => {
        await run(db, [
          ...dropNameIndex(dialect),
          'drop trigger person_delete_friendships' + (postgres ? ' on person' : ''),
          ...(postgres ? ['drop function person_delete_friendships()'] : []),
          'drop index message_inbox',
          'drop index person_id_unique',
          ...renameAside(dialect, 'compact'),
          `create table person (
            id text primary key,
            name text not null,
            age integer,
            email text,
            has_address integer not null default 0,
            street text,
            city text,
            country text,
            created_at ${timestamp} not null,
            updated_at ${timestamp} not null,
            name_lower text not null default '',
            version integer not null default 1
          )`,
          `create table friendship (
            person_id text not null references person (id) on delete cascade,
            friend_id text not null references person (id) on delete cascade,
            created_at ${timestamp} not null,
            constraint friendship_pk primary key (person_id, friend_id)
          )${postgres ? '' : ' without rowid'}`,
          `create table message (
            id text primary key,
            person_id text not null references person (id) on delete cascade,
            text text not null,
            sender_id text not null,
            sent_at ${timestamp} not null
          )`,
          `insert into person (${PERSON_COLUMNS}) select ${PERSON_COLUMNS} from person_compact order by pk`,
          `insert into friendship (person_id, friend_id, created_at)
            select p.id, f.id, ${now} from friendship_compact x
            join person_compact p on p.pk = x.person_pk
            join person_compact f on f.pk = x.friend_pk`,
          `insert into message (id, person_id, text, sender_id, sent_at)
            select m.id, p.id, m.text, m.sender_id, m.sent_at from message_compact m
            join person_compact p on p.pk = m.person_pk`,
          ...dropAside('compact'),
          'create index friendship_friend_id on friendship (friend_id)',
          'create index message_inbox on message (person_id, sent_at desc, id desc)',
          postgres ? 'create index person_id_name on person (id) include (name)' : 'create index person_id_name on person (id, name)',
          ...nameIndex(dialect, 'rowid')
        ])
        await checkForeignKeys(db, dialect)
      })
    }
  }
}
