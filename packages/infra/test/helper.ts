import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDatabase, migrateToLatest, type DatabaseHandle } from '@people-service/infra'
import type { Teardown } from '@people-service/infra/testing'

/** A migrated database in a fresh SQLite file, removed when the test ends. */
export const sqliteFile = async (t: Teardown): Promise<DatabaseHandle & { path: string }> => {
  const dir = mkdtempSync(join(tmpdir(), 'people-service-'))
  const path = join(dir, 'people.db')
  const handle = createDatabase({ url: `sqlite:${path}` })
  await migrateToLatest(handle)
  t.teardown(async () => {
    await handle.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return { ...handle, path }
}
