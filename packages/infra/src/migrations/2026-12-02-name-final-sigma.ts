import { sql, type Kysely, type Migration } from 'kysely'

// Frozen once shipped, like every migration.

/*
 * Names are searched in their folded form, which reads the final sigma ς as
 * σ (foldName): toLowerCase alone had made `ΟΔΥΣ` a needle no name
 * `ΟΔΥΣΣΕΥΣ` held. name_lower was toLowerCase of the name, so the folded
 * form is name_lower with ς replaced; only the names holding one change.
 * On SQLite the trigger on name_lower keeps the trigram index in step.
 */
export const nameFinalSigma: Migration = {
  async up (db: Kysely<any>) {
    await sql`update person set name_lower = replace(name_lower, 'ς', 'σ') where name_lower like '%ς%'`.execute(db)
  },
  // Left as they are: a folded name is still that name lower-cased, σ for ς, which the old search read as any σ.
  async down () {}
}
