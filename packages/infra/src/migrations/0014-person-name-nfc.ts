import type { Kysely, Migration } from 'kysely'

// Frozen once shipped, like every migration.

/*
 * Names are stored NFC-normalized, and a name search folds its needle to
 * NFC: a name stored decomposed (`zoe` + U+0308) would be found by no
 * needle. Such names are normalized here, with name_lower (folded as the
 * domain's foldName: NFC, lower case, ς as σ), and the person's version goes
 * up (their representation changed, so their ETag must). Names holding
 * characters the service now refuses (controls, bidirectional overrides)
 * are left as they are: the next edit of the person must fix them.
 * One pass in primary-key order, a page at a time; only changed rows are written.
 */

const PAGE = 2000

const fold = (name: string): string => name.toLowerCase().replaceAll('ς', 'σ')

export const personNameNfc: Migration = {
  async up (db: Kysely<any>) {
    let after = 0
    for (;;) {
      const rows: Array<{ pk: number, name: string }> = await db.selectFrom('person').select(['pk', 'name'])
        .where('pk', '>', after).orderBy('pk').limit(PAGE).execute()
      for (const { pk, name } of rows) {
        const normalized = name.normalize('NFC')
        if (normalized === name) continue
        await db.updateTable('person')
          .set((eb) => ({ name: normalized, name_lower: fold(normalized), version: eb('version', '+', 1) }))
          .where('pk', '=', pk).execute()
      }
      const last = rows.at(-1)
      if (last === undefined) return
      after = Number(last.pk)
    }
  },
  // Nothing to undo: the NFC form is the same name, and the decomposed one is not kept.
  async down () {}
}
