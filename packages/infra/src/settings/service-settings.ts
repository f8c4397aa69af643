import type { DatabaseHandle } from '../database.js'

/**
 * A value made up once per deployment and shared by every instance: the
 * first instance to ask stores its candidate, every later one (and any
 * instance racing it) reads that stored value back.
 */
export const sharedSetting = async ({ db }: DatabaseHandle, name: string, candidate: () => string): Promise<string> => {
  await db.insertInto('service_setting')
    .values({ name, value: candidate(), created_at: new Date().toISOString() })
    .onConflict((conflict) => conflict.column('name').doNothing())
    .execute()
  const row = await db.selectFrom('service_setting').select('value').where('name', '=', name).executeTakeFirstOrThrow()
  return row.value
}
