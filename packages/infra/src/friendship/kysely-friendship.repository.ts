import { personNotFound, type FriendshipRepository, type PersonSummary } from '@people-service/domain'
import type { Kysely } from 'kysely'
import type { Database, Dialect } from '../database.js'
import { translateErrors } from '../database-errors.js'
import { param, prepareQuery } from '../prepared-query.js'
import { personNames } from '../sql-dialect.js'

export const kyselyFriendshipRepository = (db: Kysely<Database>, dialect: Dialect): FriendshipRepository => {
  const friendsOf = prepareQuery<PersonSummary, { personId: string, limit: number }>(db, db.selectFrom('friendship')
    .innerJoin(personNames(dialect), 'person.id', 'friendship.friend_id')
    .select(['person.id', 'person.name'])
    .where('friendship.person_id', '=', param<string>('personId'))
    .orderBy('friendship.friend_id')
    .limit(param<number>('limit')))
  const listFriends = async (personId: string, limit: number): Promise<PersonSummary[]> => friendsOf({ personId, limit })

  return translateErrors({
    async add (personId, friendId, since) {
      await db.transaction().execute(async (trx) => {
        const found = await trx.selectFrom('person').select('id').where('id', 'in', [personId, friendId]).execute()
        const existing = new Set(found.map((row) => row.id))
        for (const id of [personId, friendId]) if (!existing.has(id)) throw personNotFound(id)
        const createdAt = since.toISOString()
        await trx.insertInto('friendship')
          .values([
            { person_id: personId, friend_id: friendId, created_at: createdAt },
            { person_id: friendId, friend_id: personId, created_at: createdAt }
          ])
          .onConflict((conflict) => conflict.doNothing())
          .execute()
      })
    },

    // One statement removes both directions, so no reader sees half a friendship.
    async remove (personId, friendId) {
      await db.deleteFrom('friendship')
        .where((eb) => eb.or([
          eb.and([eb('person_id', '=', personId), eb('friend_id', '=', friendId)]),
          eb.and([eb('person_id', '=', friendId), eb('friend_id', '=', personId)])
        ]))
        .execute()
    },

    listFriends,

    // One statement for any number of people: rank each person's friends and
    // keep the first `limit`. For one person, the plain range scan stops at
    // `limit` rows where ranking reads them all and sorts.
    async listFriendsOfMany (personIds, limit) {
      const result = new Map<string, PersonSummary[]>(personIds.map((id) => [id, []]))
      if (personIds.length === 0 || limit === 0) return result
      if (personIds.length === 1) return result.set(personIds[0] as string, await listFriends(personIds[0] as string, limit))
      const rows = await db
        .with('ranked', (q) => q.selectFrom('friendship')
          .select((eb) => [
            'person_id',
            'friend_id',
            eb.fn.agg<number>('row_number').over((over) => over.partitionBy('person_id').orderBy('friend_id')).as('rank')
          ])
          .where('person_id', 'in', personIds))
        .selectFrom('ranked')
        .innerJoin(personNames(dialect), 'person.id', 'ranked.friend_id')
        .select(['ranked.person_id as ownerId', 'person.id', 'person.name'])
        .where('ranked.rank', '<=', limit)
        .orderBy('ranked.person_id')
        .orderBy('ranked.friend_id')
        .execute()
      for (const { ownerId, id, name } of rows) result.get(ownerId)?.push({ id, name })
      return result
    }
  })
}
