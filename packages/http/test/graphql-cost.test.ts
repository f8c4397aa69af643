import t from 'tap'
import { apiKeyOf, loginAs, realServer, type Headers } from './helper.js'

/*
 * A GraphQL operation counts against the caller's budget as
 * max(1, ceil(cost / 100)) requests (docs/API.md, "Query endpoint"), on the
 * real server: what the RateLimit-* headers show, what `extensions.cost`
 * says, and an operation the budget cannot pay refused before it runs.
 */

interface Answer {
  status: number
  remaining: string | null
  retryAfter: string | null
  body: { data?: unknown, errors?: Array<{ message: string, extensions?: Record<string, unknown> }>, extensions?: unknown }
}

const ask = async (url: string, credentials: Headers, query: string, method: 'GET' | 'POST' = 'POST'): Promise<Answer> => {
  const response = method === 'POST'
    ? await fetch(`${url}/graphql`, { method, headers: { ...credentials, 'content-type': 'application/json' }, body: JSON.stringify({ query }) })
    : await fetch(`${url}/graphql?${new URLSearchParams({ query })}`, { headers: credentials })
  return {
    status: response.status,
    remaining: response.headers.get('ratelimit-remaining'),
    retryAfter: response.headers.get('retry-after'),
    body: await response.json() as Answer['body']
  }
}

const FRIENDS = '{ people(limit: 100) { friends(limit: 10) { name } } }' // 100 + 100·10 = 1,100: 11 requests
// One write (100), 100 friends of the new person and 30 friends of each: 100 + 100 + 100·30 = 3,200, 32 requests.
const COSTLY_MUTATION = 'mutation { createPerson(input: { name: "Eve" }) { name friends(limit: 100) { friends(limit: 30) { id } } } }'
const DATA = /\b(person|friendship|message)\b/

t.test('an operation counts max(1, ceil(cost / 100)) requests; RateLimit-Remaining and extensions.cost show it', async (t) => {
  const { url, admin } = await realServer(t)
  const cases: Array<[string, 'GET' | 'POST', number, number]> = [
    ['{ people(limit: 5) { id } }', 'POST', 5, 1],
    [FRIENDS, 'GET', 1100, 11],
    [FRIENDS, 'POST', 1100, 11],
    ['{ people(limit: 101) { id } }', 'POST', 101, 2],
    ['{ people(limit: 100) { id } }', 'GET', 100, 1],
    ['mutation { createPerson(input: { name: "Ada" }) { id } }', 'POST', 100, 1],
    // Each write counts as the REST request that makes it would.
    ['mutation { a: createPerson(input: { name: "A" }) { id } b: createPerson(input: { name: "B" }) { id } c: createPerson(input: { name: "C" }) { id } }', 'POST', 300, 3],
    ['{ people(limit: 1, name: "Ad") { name } }', 'GET', 2001, 21]
  ]
  let left = 1000
  for (const [query, method, requested, charged] of cases) {
    const { status, remaining, body } = await ask(url, admin, query, method)
    left -= charged
    t.equal(status, 200, `${method} ${query}`)
    t.same(body.extensions, { cost: { requested, charged } }, `${query}: extensions.cost`)
    t.equal(remaining, String(left), `${query}: ${charged} of the budget`)
  }
  const failed = await ask(url, admin, '{ people(cursor: "garbage") { id } }')
  t.match(failed, { status: 200, body: { data: null, errors: [{ extensions: { code: 'INVALID_CURSOR' } }], extensions: { cost: { requested: 100, charged: 1 } } } },
    'a field that failed: the operation ran, and was charged')
})

t.test('through a key, the key\'s budget and its account\'s pay the same cost', async (t) => {
  const { app, url } = await realServer(t)
  const editor = await loginAs(app, 'editor')
  const key = { 'x-api-key': (await apiKeyOf(app, editor, { scopes: ['people:read'], rateLimit: 30 }))['x-api-key'] }
  t.equal((await ask(url, key, FRIENDS)).remaining, '19', 'the key: 30 - 11')
  t.equal((await ask(url, key, FRIENDS)).remaining, '8')
  t.equal((await fetch(`${url}/users/me`, { headers: editor })).headers.get('ratelimit-remaining'), String(1000 - 1 - 22 - 1), 'the account paid as much, beside the key\'s creation')
})

t.test('an operation that costs more than the budget has left is refused with 429 before anything runs', async (t) => {
  const { app, url, database } = await realServer(t, { access: { limits: { max: 40 } } })
  const editor = await loginAs(app, 'editor')
  t.equal((await ask(url, editor, FRIENDS)).remaining, '29')
  database.statements.length = 0
  for (const method of ['POST', 'GET'] as const) {
    // The mutation: 3,200, 32 requests; the query 3,100, 31; one of them paid on arrival.
    const [query, requested, rest] = method === 'POST' ? [COSTLY_MUTATION, 3200, 31] : ['{ people(limit: 100) { friends(limit: 30) { id } } }', 3100, 30]
    const refused = await ask(url, editor, query, method)
    t.equal(refused.status, 429, `${method}: the budget cannot pay`)
    t.ok(Number(refused.retryAfter) > 0, `Retry-After ${refused.retryAfter}`)
    t.match(refused.body, {
      errors: [{ message: new RegExp(`rate limit exceeded for this account: 40 requests per 60 s; this costs ${rest} and \\d+ are left`), extensions: { code: 'RATE_LIMITED' } }],
      extensions: { cost: { requested, charged: 1 } }
    })
    t.notOk('data' in refused.body, 'no data: nothing ran')
  }
  t.same(database.statements.filter((s) => DATA.test(s)), [], 'not one statement reached the data: the mutation did not happen')
  const after = await ask(url, editor, '{ people { name } }')
  t.same(after.body.data, { people: [] }, 'Eve was not created')
  t.equal(after.remaining, '26', 'each refusal took one request (reading it), not its cost')
  const whole = await ask(url, editor, '{ people(limit: 100) { friends(limit: 45) { id } } }')
  t.equal(whole.status, 429)
  t.match(whole.body.errors?.[0]?.message, /more than the whole budget/)
})

t.test('refusals before the charge carry no cost: it was not charged', async (t) => {
  const { url, admin } = await realServer(t)
  for (const query of ['{ people(limit: 1000) { friends(limit: 100) { id } } }', '{ nope }', 'mutation { deletePerson(id: "x") }']) {
    const { status, body } = await ask(url, admin, query, 'GET')
    t.ok(status >= 400, `${query}: ${status}`)
    t.notOk('extensions' in body, `${query}: no extensions.cost`)
  }
})
