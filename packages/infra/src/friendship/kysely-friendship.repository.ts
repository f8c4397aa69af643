import { personNotFound, type FriendshipRepository, type PersonSummary } from '@people-service/domain'
import type { Kysely } from 'kysely'
import type { Database, Dialect } from '../database.js'
import { translateErrors } from '../database-errors.js'
import { param, prepareQuery } from '../prepared-query.js'

/*
 * Friendships are stored by the people's integer keys, in both directions;
 * the public ids are looked up through person's unique index on id. A
 * friend list is ordered by friend_pk: keys are given in creation order,
 * which is the order of the UUIDv7 ids.
 */
export const kyselyFriendshipRepository = (db: Kysely<Database>, _dialect: Dialect): FriendshipRepository => {
  const friendsOf = prepareQuery<PersonSummary, { personId: string, limit: number }>(db, db.selectFrom('friendship')
    .innerJoin('person', 'person.pk', 'friendship.friend_pk')
    .select(['person.id', 'person.name'])
    .where('friendship.person_pk', '=', db.selectFrom('person as owner').select('owner.pk').where('owner.id', '=', param<string>('personId')))
    .orderBy('friendship.friend_pk')
    .limit(param<number>('limit')))
  const listFriends = async (personId: string, limit: number): Promise<PersonSummary[]> => friendsOf({ personId, limit })

  return translateErrors({
    async add (personId, friendId) {
      await db.transaction().execute(async (trx) => {
        const found = await trx.selectFrom('person').select(['pk', 'id']).where('id', 'in', [personId, friendId]).execute()
        const pks = new Map(found.map((row) => [row.id, row.pk]))
        const personPk = pks.get(personId)
        const friendPk = pks.get(friendId)
        if (personPk === undefined) throw personNotFound(personId)
        if (friendPk === undefined) throw personNotFound(friendId)
        await trx.insertInto('friendship')
          .values([{ person_pk: personPk, friend_pk: friendPk }, { person_pk: friendPk, friend_pk: personPk }])
          .onConflict((conflict) => conflict.doNothing())
          .execute()
      })
    },

    // One statement removes both directions, so no reader sees half a friendship.
    async remove (personId, friendId) {
      const pair = db.selectFrom('person').select('pk').where('id', 'in', [personId, friendId])
      await db.deleteFrom('friendship').where('person_pk', 'in', pair).where('friend_pk', 'in', pair).execute()
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
          .innerJoin('person as owner', 'owner.pk', 'friendship.person_pk')
          .select((eb) => [
            'owner.id as ownerId',
            'friendship.friend_pk',
            eb.fn.agg<number>('row_number').over((over) => over.partitionBy('friendship.person_pk').orderBy('friendship.friend_pk')).as('rank')
          ])
          .where('owner.id', 'in', personIds))
        .selectFrom('ranked')
        .innerJoin('person', 'person.pk', 'ranked.friend_pk')
        .select(['ranked.ownerId', 'person.id', 'person.name'])
        .where('ranked.rank', '<=', limit)
        .orderBy('ranked.ownerId')
        .orderBy('ranked.friend_pk')
        .execute()
      for (const { ownerId, id, name } of rows) result.get(ownerId)?.push({ id, name })
      return result
    }
  })
}
