import { sql, type Kysely, type Migration } from 'kysely'

// Frozen once shipped, like every migration.

/*
 * Names are searched in their folded form, which reads the final sigma ς as
 * σ (foldName): toLowerCase alone had made `ΟΔΥΣ` a needle no name
 * `ΟΔΥΣΣΕΥΣ` held. name_lower was toLowerCase of the name, so the folded
 * form is name_lower with ς replaced; only the names holding one change.
 * On SQLite the trigger on name_lower keeps the trigram index in step.
 */

const PAGE = 1000

export const nameFinalSigma: Migration = {
  async up (db: Kysely<any>) {
    await sql`update person set name_lower = replace(name_lower, 'ς', 'σ') where name_lower like '%ς%'`.execute(db)
  },
  // Back to toLowerCase of the name, as the search before folds its needle:
  // a name ending in Σ is found whole again. Which σ was a ς only the name
  // says, and JavaScript lower-cases it, as the backfill of name_lower did.
  async down (db: Kysely<any>) {
    let after = ''
    for (;;) {
      const rows: Array<{ id: string, name: string }> = await db.selectFrom('person').select(['id', 'name'])
        .where('name_lower', 'like', '%σ%').where('id', '>', after).orderBy('id').limit(PAGE).execute()
      for (const { id, name } of rows) {
        const lower = name.toLowerCase()
        if (lower.includes('ς')) await db.updateTable('person').set({ name_lower: lower }).where('id', '=', id).execute()
      }
      const last = rows[rows.length - 1]
      if (last === undefined) return
      after = last.id
    }
  }
}
