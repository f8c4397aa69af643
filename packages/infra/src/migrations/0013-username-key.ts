import { sql, type Kysely, type Migration } from 'kysely'

// Frozen once shipped, like every migration.

/*
 * Usernames are unique without regard to case: account.username_key holds
 * the username NFKC-normalized and lower-cased (the domain's usernameKey;
 * usernames are ASCII letters, digits and . _ @ - once NFKC-normalized, so
 * lower-casing is case folding), under a unique index; logins find accounts
 * by it.
 *
 * Existing accounts whose usernames are one under that rule (`Admin` next
 * to `admin`): the oldest (by creation, then id) keeps its username; each
 * later one is renamed `<username>-<last 8 characters of its id>` (cut to
 * fit 64 characters), its password, role and keys unchanged. An admin finds
 * them in GET /users and tells their owners; nothing else is lost.
 */

const PAGE = 1000
const USERNAME_LENGTH = 64

const keyOf = (username: string): string => username.normalize('NFKC').toLowerCase()

export const usernameKey: Migration = {
  async up (db: Kysely<any>) {
    await db.schema.alterTable('account').addColumn('username_key', 'text', (c) => c.notNull().defaultTo('')).execute()
    const seen = new Set<string>()
    let after: { createdAt: unknown, id: string } | undefined
    for (;;) {
      let query = db.selectFrom('account').select(['id', 'username', 'created_at'])
      if (after !== undefined) query = query.where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(after!.createdAt, after!.id)))
      const rows: Array<{ id: string, username: string, created_at: unknown }> = await query.orderBy('created_at').orderBy('id').limit(PAGE).execute()
      for (const { id, username } of rows) {
        let name = username
        if (seen.has(keyOf(name))) name = `${username.slice(0, USERNAME_LENGTH - 9)}-${id.slice(-8)}`
        seen.add(keyOf(name))
        await db.updateTable('account').set({ username: name, username_key: keyOf(name) }).where('id', '=', id).execute()
      }
      const last = rows.at(-1)
      if (last === undefined || rows.length < PAGE) break
      after = { createdAt: last.created_at, id: last.id }
    }
    await db.schema.createIndex('account_username_folded').on('account').column('username_key').unique().execute()
  },
  // Renamed accounts keep their new names: which was renamed is not recorded.
  async down (db: Kysely<any>) {
    await db.schema.dropIndex('account_username_folded').execute()
    await sql`alter table account drop column username_key`.execute(db)
  }
}
