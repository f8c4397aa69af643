import { personNotFound, type FriendEntry, type FriendshipRepository, type PersonSummary } from '@people-service/domain'
import { sql, type Kysely } from 'kysely'
import type { Database, Dialect } from '../database.js'
import { retryDeadlocks, translateErrors } from '../database-errors.js'
import { param, prepareSql } from '../prepared-query.js'
import { boundIds, idsIn, personSummaries } from '../sql-dialect.js'

/**
 * Friends of many people in one statement, whatever their number: the ids
 * bound as one array, each owner's first `limit` friends taken by a
 * correlated LIMIT subquery (a range of the primary key), and each list
 * built as JSON by the database. Measured on SQLite at 100k people × 20
 * friends, 100 owners × 10 friends (medians): this 1.1 ms parsed into the
 * map; the same cut-off as rows 1.3–1.6 ms; a correlated IN 2.1 ms;
 * row_number() over json_each 3.1 ms, over an IN list 3.7 ms. SQLite
 * aggregates in the order of the friendship range (a co-routine in friend_pk
 * order), so its aggregate needs no ORDER BY, which would sort each list again.
 */
const friendsOfManySql = <Friend>(dialect: Dialect, ids: unknown, limit: unknown, positions: boolean) => {
  // A page's entries carry their position too: what its cursor keeps.
  const fields = sql.raw(`'id', p.id, 'name', p.name${positions ? ", 'position', f.friend_pk" : ''}`)
  const list = dialect === 'postgres'
    ? sql`coalesce(json_agg(json_build_object(${fields}) order by f.friend_pk), '[]')`
    : sql`json_group_array(json_object(${fields}))`
  return sql<{ ownerId: string, friends: string | Friend[] }>`select owner.id as "ownerId",
      (select ${list}
        from (select g.friend_pk from friendship g where g.person_pk = owner.pk order by g.friend_pk limit ${limit}) f
        join ${sql.raw(personSummaries(dialect, 'p'))} on p.pk = f.friend_pk) as friends
      from person owner where ${idsIn(dialect, 'owner.id', ids)}`
}

/** A friend as a page's statement reads them: with their key, the list's order. */
interface PositionedFriend { id: string, name: string, position: number | string }

// PostgreSQL's driver gives a bigint as text; these keys are integers.
const toEntry = ({ id, name, position }: PositionedFriend): FriendEntry => ({ friend: { id, name }, position: Number(position) })

/*
 * Friendships are stored by the people's integer keys, in both directions;
 * the public ids are looked up through person's unique index on id. A
 * friend list is ordered by friend_pk, the order people were stored: the
 * order of their UUIDv7 ids, but for people created at the same moment on
 * PostgreSQL, whose inserts may take keys in another order than their ids
 * were made. Ordering by id instead would sort every friend of a person to
 * answer the first ten.
 */
export const kyselyFriendshipRepository = (db: Kysely<Database>, dialect: Dialect): FriendshipRepository => {
  const friendsOf = prepareSql<PersonSummary, { personId: string, limit: number }>(db, sql<PersonSummary>`select p.id, p.name
    from friendship f join ${sql.raw(personSummaries(dialect, 'p'))} on p.pk = f.friend_pk
    where f.person_pk = (select o.pk from person o where o.id = ${param('personId')})
    order by f.friend_pk limit ${param('limit')}`)
  const listFriends = async (personId: string, limit: number): Promise<PersonSummary[]> => friendsOf({ personId, limit })
  // The page after a position: a seek in the friendship key, (person_pk, friend_pk).
  // The position is cast on PostgreSQL so that a cursor past int4 compares rather than fails.
  const friendsAfter = prepareSql<{ id: string, name: string, position: number }, { personId: string, after: number, limit: number }>(db, sql`select p.id, p.name, f.friend_pk as position
    from friendship f join ${sql.raw(personSummaries(dialect, 'p'))} on p.pk = f.friend_pk
    where f.person_pk = (select o.pk from person o where o.id = ${param('personId')})
      and f.friend_pk > ${dialect === 'postgres' ? sql`cast(${param('after')} as bigint)` : param('after')}
    order by f.friend_pk limit ${param('limit')}`)
  const friendsOfMany = prepareSql<{ ownerId: string, friends: string | PersonSummary[] }, { ids: unknown, limit: number }>(db,
    friendsOfManySql<PersonSummary>(dialect, param('ids'), param('limit'), false))
  const pagesOfMany = prepareSql<{ ownerId: string, friends: string | PositionedFriend[] }, { ids: unknown, limit: number }>(db,
    friendsOfManySql<PositionedFriend>(dialect, param('ids'), param('limit'), true))

  return translateErrors({
    async add (personId, friendId) {
      const add = async (trx: Kysely<Database>): Promise<boolean> => {
        // On PostgreSQL both people are held until the commit, as a foreign
        // key would hold them: a deletion of either waits for it, or has
        // gone first and neither is found. Without it, a deletion committed
        // meanwhile failed the insert (500), or, the rows being there
        // already (DO NOTHING checks no key), left one pointing at nobody.
        const found = await trx.selectFrom('person').select(['pk', 'id']).where('id', 'in', [personId, friendId])
          .$if(dialect === 'postgres', (query) => query.forKeyShare())
          .execute()
        const pks = new Map(found.map((row) => [row.id, row.pk]))
        const personPk = pks.get(personId)
        const friendPk = pks.get(friendId)
        if (personPk === undefined) throw personNotFound(personId)
        if (friendPk === undefined) throw personNotFound(friendId)
        // Both directions in one order whoever asks: A befriending B while
        // B befriends A took them in opposite orders and deadlocked.
        const [low, high] = personPk < friendPk ? [personPk, friendPk] : [friendPk, personPk]
        const { numInsertedOrUpdatedRows } = await trx.insertInto('friendship')
          .values([{ person_pk: low, friend_pk: high }, { person_pk: high, friend_pk: low }])
          .onConflict((conflict) => conflict.doNothing())
          .executeTakeFirst()
        return (numInsertedOrUpdatedRows ?? 0n) > 0n
      }
      // Inside a unit of work, which runs again on a deadlock as a whole.
      return db.isTransaction ? add(db) : retryDeadlocks(() => db.transaction().execute(add))
    },

    // One statement removes both directions, so no reader sees half a
    // friendship. A deletion of either person takes the two rows in the
    // other order (trigger, then cascade) when the friend's key is the
    // lower: run again when PostgreSQL breaks that deadlock.
    async remove (personId, friendId) {
      const pair = db.selectFrom('person').select('pk').where('id', 'in', [personId, friendId])
      const remove = () => db.deleteFrom('friendship').where('person_pk', 'in', pair).where('friend_pk', 'in', pair).executeTakeFirst()
      const { numDeletedRows } = db.isTransaction ? await remove() : await retryDeadlocks(remove)
      return numDeletedRows > 0n
    },

    listFriends,

    // One statement for any number of people (see friendsOfManySql). The
    // JSON comes as text from SQLite, parsed already from PostgreSQL's driver.
    async listFriendsOfMany (personIds, limit) {
      const result = new Map<string, PersonSummary[]>(personIds.map((id) => [id, []]))
      if (personIds.length === 0 || limit === 0) return result
      for (const { ownerId, friends } of await friendsOfMany({ ids: boundIds(dialect, [...result.keys()]), limit })) {
        result.set(ownerId, typeof friends === 'string' ? JSON.parse(friends) as PersonSummary[] : friends)
      }
      return result
    },

    async pageFriends (personId, { limit, after }) {
      // Keys start at 1: "after 0" is from the start, one statement for both.
      const rows = await friendsAfter({ personId, after: after ?? 0, limit })
      return rows.map(toEntry)
    },

    async pageFriendsOfMany (personIds, limit) {
      const result = new Map<string, FriendEntry[]>(personIds.map((id) => [id, []]))
      if (personIds.length === 0 || limit === 0) return result
      for (const { ownerId, friends } of await pagesOfMany({ ids: boundIds(dialect, [...result.keys()]), limit })) {
        result.set(ownerId, (typeof friends === 'string' ? JSON.parse(friends) as PositionedFriend[] : friends).map(toEntry))
      }
      return result
    }
  })
}
