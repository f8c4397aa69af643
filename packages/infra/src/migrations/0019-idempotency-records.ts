import { sql, type Kysely, type Migration } from 'kysely'
import type { Dialect } from '../database.js'
import { packBody } from '../idempotency/stored-body.js'

// Frozen once shipped, like every migration.

/*
 * An idempotency record keeps its answer as status, headers and the body's
 * bytes deflated (idempotency/stored-body.ts), no longer one JSON text; it
 * names the account whose allowance it takes (`owner`, with an index on
 * owner and expiry for the count) and the person whose data the answer
 * holds (`subject`, indexed). Deleting that person erases the answer in
 * the same statement, by a trigger, leaving `erased` set so that a repeat
 * learns the person is gone rather than running anew.
 * Records already answered are rewritten a page at a time; their owner is
 * their caller (an API key's account is not recorded on them), for the 24
 * hours they have left.
 */

const PAGE = 500

interface StoredJson { status: number, headers: Record<string, string>, body: { id?: unknown, personId?: unknown } }

const eraseTrigger = (dialect: Dialect): string[] => {
  const body = 'update idempotency_key set status = null, headers = null, body = null, erased = 1 where subject = old.id'
  return dialect === 'postgres'
    ? [
        `create function person_erase_idempotent_answers() returns trigger language plpgsql as $$
          begin ${body}; return old; end $$`,
        `create trigger person_erase_idempotent_answers after delete on person
          for each row execute function person_erase_idempotent_answers()`
      ]
    : [`create trigger person_erase_idempotent_answers after delete on person begin ${body}; end`]
}

const rewriteAnswered = async (db: Kysely<any>): Promise<void> => {
  let after: [string, string] = ['', '']
  for (;;) {
    const rows: Array<{ scope: string, key: string, response: string }> = await db.selectFrom('idempotency_key')
      .select(['scope', 'key', 'response'])
      .where((eb) => eb(eb.refTuple('scope', 'key'), '>', eb.tuple(after[0], after[1])))
      .where('response', 'is not', null)
      .orderBy('scope').orderBy('key').limit(PAGE).execute()
    for (const { scope, key, response } of rows) {
      const stored = JSON.parse(response) as StoredJson
      const subject = stored.body.personId ?? stored.body.id
      await db.updateTable('idempotency_key').set({
        status: stored.status,
        headers: JSON.stringify(stored.headers),
        body: packBody(Buffer.from(JSON.stringify(stored.body))),
        subject: typeof subject === 'string' ? subject : null
      }).where('scope', '=', scope).where('key', '=', key).execute()
    }
    const last = rows.at(-1)
    if (last === undefined) return
    after = [last.scope, last.key]
  }
}

export const idempotencyRecords = (dialect: Dialect): Migration => ({
  async up (db: Kysely<any>) {
    const bytes = dialect === 'postgres' ? 'bytea' : 'blob'
    for (const [column, type] of [['owner', 'text'], ['subject', 'text'], ['status', 'integer'], ['headers', 'text'], ['body', bytes]] as const) {
      await db.schema.alterTable('idempotency_key').addColumn(column, type).execute()
    }
    await db.schema.alterTable('idempotency_key').addColumn('erased', 'integer', (c) => c.notNull().defaultTo(0)).execute()
    await rewriteAnswered(db)
    await db.updateTable('idempotency_key').set((eb) => ({ owner: eb.ref('scope') })).execute()
    await db.schema.alterTable('idempotency_key').dropColumn('response').execute()
    await db.schema.createIndex('idempotency_key_owner_expires_at').on('idempotency_key').columns(['owner', 'expires_at']).execute()
    await db.schema.createIndex('idempotency_key_subject').on('idempotency_key').column('subject').execute()
    for (const statement of eraseTrigger(dialect)) await sql.raw(statement).execute(db)
  },
  async down (db: Kysely<any>) {
    await sql.raw('drop trigger person_erase_idempotent_answers' + (dialect === 'postgres' ? ' on person' : '')).execute(db)
    if (dialect === 'postgres') await sql`drop function person_erase_idempotent_answers()`.execute(db)
    await db.schema.dropIndex('idempotency_key_subject').execute()
    await db.schema.dropIndex('idempotency_key_owner_expires_at').execute()
    // Answers kept in the new form do not go back: those records are forgotten.
    await db.deleteFrom('idempotency_key').where('status', 'is not', null).execute()
    await db.schema.alterTable('idempotency_key').addColumn('response', 'text').execute()
    for (const column of ['erased', 'body', 'headers', 'status', 'subject', 'owner']) {
      await db.schema.alterTable('idempotency_key').dropColumn(column).execute()
    }
  }
})
