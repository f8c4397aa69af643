import { sql, type Kysely, type Migration } from 'kysely'

// Frozen once shipped, like every migration.

/*
 * A listing of API keys shows the active ones, in creation order, an
 * account's own or (admins) everyone's. Its indexes held revoked keys too,
 * which never leave the table (their usage stays readable): a caller that
 * made and revoked 50,000 keys, two requests each, made every listing read
 * past all of them, 4.8 ms a time and growing. Indexes of the active keys
 * alone, the same on SQLite and PostgreSQL (both take a partial index and
 * use it for a query that says `revoked_at is null`), keep a listing as
 * long as the keys it shows. The owner index stays: deleting an account
 * finds every key of its owner, revoked ones too.
 */
export const activeApiKeyIndexes: Migration = {
  async up (db: Kysely<any>) {
    await sql`create index api_key_owner_active on api_key (owner_id, created_at, id) where revoked_at is null`.execute(db)
    await sql`create index api_key_active on api_key (created_at, id) where revoked_at is null`.execute(db)
    await sql`drop index api_key_created`.execute(db)
  },
  async down (db: Kysely<any>) {
    await sql`create index api_key_created on api_key (created_at, id)`.execute(db)
    await sql`drop index api_key_active`.execute(db)
    await sql`drop index api_key_owner_active`.execute(db)
  }
}
