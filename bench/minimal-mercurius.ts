// The same SQLite binding as the service's (see packages/infra/src/sqlite/better-sqlite3.ts).
import { BetterSqlite3 as Database } from '@people-service/infra'
import Fastify from 'fastify'
import mercurius, { type IResolvers, type MercuriusLoaders } from 'mercurius'

/*
 * The reference point for the GraphQL scenarios: a minimal Mercurius server
 * over better-sqlite3 on the same file, as a small team would write it with
 * the library's own tools: its loaders (one batch per list level) and its
 * JIT, prepared statements, and nothing else — no authentication,
 * validation, limits, cost, headers or metrics. The gap between it and the
 * real server is what the service's pipeline costs; the service should not
 * be slower than this.
 */
const db = new Database(process.env.DATABASE_FILE ?? '', { readonly: true })

interface PersonRow { id: string, name: string, age: number | null, email: string | null, has_address: number, street: string | null, city: string | null, country: string | null }
interface FriendRow { owner: string, id: string, name: string }

const byId = db.prepare<[string], PersonRow>('select * from person where id = ?')
const page = db.prepare<[number], PersonRow>('select * from person order by id limit ?')
// Friends of many people in one statement: the ids bound as one JSON array,
// each person's friends ranked by key (creation order) and cut at the limit.
const friendsOfMany = db.prepare<[string, number], FriendRow>(`
  select owner, id, name from (
    select o.id as owner, p.id, p.name, f.friend_pk,
           row_number() over (partition by f.person_pk order by f.friend_pk) as rank
    from person o join friendship f on f.person_pk = o.pk join person p on p.pk = f.friend_pk
    where o.id in (select value from json_each(?))
  ) where rank <= ? order by owner, friend_pk`)

const toPerson = (row: PersonRow) => ({
  id: row.id,
  name: row.name,
  age: row.age,
  email: row.email,
  address: row.has_address ? { street: row.street, city: row.city, country: row.country } : null
})

const schema = /* GraphQL */ `
  type Query {
    person(id: ID!): Person
    people(limit: Int = 100): [Person!]!
  }
  type Person {
    id: ID!
    name: String!
    age: Int
    email: String
    address: Address
    friends(limit: Int = 10): [Person!]!
  }
  type Address { street: String city: String country: String }
`

const resolvers: IResolvers = {
  Query: {
    person: (_: unknown, { id }: { id: string }) => {
      const row = byId.get(id)
      return row === undefined ? null : toPerson(row)
    },
    people: (_: unknown, { limit }: { limit: number }) => page.all(limit).map(toPerson)
  }
}

type FriendsQuery = { obj: { id: string }, params: { limit: number } }

const loaders: MercuriusLoaders = {
  Person: {
    async friends (queries: FriendsQuery[]) {
      const byLimit = new Map<number, string[]>()
      for (const { obj, params } of queries) {
        const ids = byLimit.get(params.limit)
        if (ids === undefined) byLimit.set(params.limit, [obj.id])
        else ids.push(obj.id)
      }
      const found = new Map<string, Array<{ id: string, name: string }>>()
      for (const [limit, ids] of byLimit) {
        for (const { owner, id, name } of friendsOfMany.all(JSON.stringify(ids), limit)) {
          const key = `${limit} ${owner}`
          const friends = found.get(key)
          if (friends === undefined) found.set(key, [{ id, name }])
          else friends.push({ id, name })
        }
      }
      return queries.map(({ obj, params }) => found.get(`${params.limit} ${obj.id}`) ?? [])
    }
  }
}

const app = Fastify({ logger: false })
await app.register(mercurius, { schema, resolvers, loaders, jit: 1 })
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) })
process.on('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
