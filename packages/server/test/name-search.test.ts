import t from 'tap'
import { createDatabase, migrateToLatest, seedDatabase } from '@people-service/infra'
import type { Teardown } from '@people-service/infra/testing'
import { call, login, start, tempDatabaseUrl } from './helper.js'

/*
 * GET /people?name= with a needle the name index cannot serve reads the
 * people 20,000 at a time (infra's name-search.ts); each range after the
 * first counts one more request against the caller's budget, as the
 * OpenAPI description of the route says. 45,000 people make three ranges.
 */

const PEOPLE = 45_000

/** A SQLite file of PEOPLE synthetic people, named "<first> <last> <n>" for n = 0…PEOPLE − 1. */
const seeded = async (t: Teardown): Promise<string> => {
  const url = tempDatabaseUrl(t)
  const handle = createDatabase({ url })
  await migrateToLatest(handle)
  await seedDatabase(handle, { people: PEOPLE, friends: 0, messages: 0 })
  await handle.close()
  return url
}

t.test('a name search pays one request for each range of people it reads after the first, and stops when the budget does', async (t) => {
  const server = await start(t, { DATABASE_URL: await seeded(t), RATE_LIMIT_MAX: '20' })
  const admin = await login(server.url)
  const get = async (path: string) => call(server.url, 'GET', path, admin)
  const remaining = (response: { headers: Headers }) => Number(response.headers.get('ratelimit-remaining'))

  const page = await get('/people?limit=1')
  t.equal(remaining(page), 19, 'a page of people: one request')

  const nobody = await get('/people?name=zq')
  t.equal(nobody.status, 200)
  t.same(nobody.json(), [], 'no synthetic name holds "zq": every range is read')
  t.equal(remaining(page) - remaining(nobody), 3, 'one request, and two more for the second and third ranges')

  const common = await get('/people?name=e&limit=10')
  t.equal(common.json().length, 10)
  t.equal(remaining(nobody) - remaining(common), 1, 'a needle most names hold fills the page in the first range')

  const indexed = await get('/people?name=Lovelace%2012')
  t.ok(indexed.json().length > 0)
  t.equal(remaining(common) - remaining(indexed), 1, 'a needle the index serves: one request')

  // 14 left: four more searches leave 2, and the next pays for its first
  // range and its second, and is refused before its third.
  for (let i = 0; i < 4; i++) t.equal((await get('/people?name=zq')).status, 200)
  const refused = await get('/people?name=zq')
  t.equal(refused.status, 429)
  t.equal(refused.json().code, 'RATE_LIMITED')
  t.ok(Number(refused.headers.get('retry-after')) > 0, 'with Retry-After')
  t.equal(remaining(refused), 0)
  t.equal((await get('/people?limit=1')).status, 429, 'and the budget is spent')
})

t.test('a name search across ranges pages by Link like any list: present while more match, absent on the last page', async (t) => {
  const server = await start(t, { DATABASE_URL: await seeded(t) })
  const admin = await login(server.url)
  // " 4" is in the names numbered 4, 40–49, 400–499, 4,000–4,999 (the first
  // range) and 40,000–44,999 (the third): the second page's people and the
  // one after them lie two ranges apart.
  const expected = 1 + 10 + 100 + 1_000 + (PEOPLE - 40_000)
  const names: string[] = []
  let path: string | undefined = '/people?name=%204&limit=1000'
  let pages = 0
  while (path !== undefined) {
    const response = await call(server.url, 'GET', path, admin)
    t.equal(response.status, 200, path)
    const page = response.json() as Array<{ id: string, name: string }>
    names.push(...page.map((person) => person.name))
    pages++
    const next = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1]
    if (next !== undefined) t.equal(page.length, 1000, `a page with a next one is full (page ${pages})`)
    path = next === undefined ? undefined : next.slice(next.indexOf('/people'))
  }
  t.equal(pages, Math.ceil(expected / 1000), 'no Link after the last match')
  t.equal(names.length, expected, `every match once (${expected}, in ${pages} pages)`)
  t.equal(new Set(names).size, expected)
  t.ok(names.every((name) => / 4\d*$/.test(name)), 'and only matches')
})
