import t from 'tap'
import { getIntrospectionQuery } from 'graphql'
import { uuidv7Generator, type Person } from '@people-service/domain'
import { createRepositories } from '@people-service/infra'
import type { Teardown } from '@people-service/infra/testing'
import { RESPONSE_LIMITS } from '@people-service/http'
import { apiKeyOf, nextLink, realServer, type Headers } from './helper.js'

/*
 * Cost means bytes and time (docs/API.md, "Query endpoint"): a message's
 * text counts its worst-case size, introspection what it returns, and no
 * response exceeds MAX_RESPONSE_BYTES. U+0001 is written as six bytes in
 * JSON (\u0001): a 10,000-character text of them is 60 KB, so a thousand
 * people's four newest messages were 240 MB built in memory, in seconds.
 */

const CONTROL_TEXT = '\u0001'.repeat(10_000)

/** A real server over a SQLite file holding `people` people, the first `inboxes` with `messages` messages of 10,000 × U+0001 each. */
const seeded = async (t: Teardown, { people: count, inboxes, messages }: { people: number, inboxes: number, messages: number }, options: Parameters<typeof realServer>[1] = {}) => {
  const server = await realServer(t, { access: { limits: { max: 0 } }, ...options })
  const repositories = createRepositories(server.database)
  const ids = uuidv7Generator()
  const now = new Date()
  const people: Person[] = []
  for (let i = 0; i < count; i++) {
    const person: Person = { id: ids.next(), name: `Person ${i}`, age: null, email: null, address: null, createdAt: now, updatedAt: now, version: 1 }
    await repositories.people.insert(person)
    people.push(person)
  }
  for (const person of people.slice(0, inboxes)) {
    for (let m = 0; m < messages; m++) {
      await repositories.messages.insert({ id: ids.next(), personId: person.id, text: CONTROL_TEXT, senderId: 'seed', sentAt: new Date(now.getTime() + m) })
    }
  }
  server.database.statements.length = 0
  return { ...server, people }
}

interface Answer { status: number, ms: number, bytes: number, body: { data?: unknown, errors?: Array<{ message: string, extensions?: Record<string, unknown> }>, extensions?: { cost?: { requested: number, charged: number } } } }

const ask = async (url: string, credentials: Headers, query: string): Promise<Answer> => {
  const started = performance.now()
  const response = await fetch(`${url}/graphql`, { method: 'POST', headers: { ...credentials, 'content-type': 'application/json' }, body: JSON.stringify({ query }) })
  const text = await response.text()
  return { status: response.status, ms: performance.now() - started, bytes: Buffer.byteLength(text), body: JSON.parse(text) as Answer['body'] }
}

const DATA = /\b(person|message)\b/

t.test('the 240 MB query is refused before it runs; the heaviest admitted one stays under 8 MiB and answers quickly', async (t) => {
  const { url, admin, database } = await seeded(t, { people: 60, inboxes: 60, messages: 4 })
  const refused = await ask(url, admin, '{ people(limit: 1000) { messages(limit: 4) { text } } }')
  t.equal(refused.status, 400)
  t.match(refused.body.errors, [{ extensions: { code: 'QUERY_TOO_COSTLY', cost: 1000 * (1 + 4 * 101) } }], 'each text costs 100 more than its row')
  t.ok(refused.ms < 1000, `refused in ${refused.ms.toFixed(0)} ms`)
  t.same(database.statements.filter((s) => DATA.test(s)), [], 'nothing was read')

  // 49 people's newest message: 49 + 49 · 101 = 4,998, the most the default budget admits.
  const heaviest = await ask(url, admin, '{ people(limit: 49) { messages(limit: 1) { text } } }')
  t.equal(heaviest.status, 200)
  t.same(heaviest.body.extensions, { cost: { requested: 4998, charged: 50 } })
  t.equal((heaviest.body.data as { people: unknown[] }).people.length, 49)
  t.ok(heaviest.bytes > 49 * 60_000 && heaviest.bytes < RESPONSE_LIMITS.defaultMaxBytes, `${heaviest.bytes} bytes: every text whole, under 8 MiB`)
  t.ok(heaviest.ms < 2000, `answered in ${heaviest.ms.toFixed(0)} ms`)
})

t.test('an operation whose worst-case response exceeds MAX_RESPONSE_BYTES is refused whatever the cost budget', async (t) => {
  const { url, admin, database } = await seeded(t, { people: 20, inboxes: 20, messages: 4 }, { graphqlMaxCost: 1_000_000_000 })
  const refused = await ask(url, admin, '{ people(limit: 1000) { messages(limit: 4) { text } } }')
  t.equal(refused.status, 400)
  const [error] = refused.body.errors ?? []
  t.match(error, { message: /worst-case response is [\d,]+ bytes, over the 8,388,608 a response may take \(MAX_RESPONSE_BYTES\)/, extensions: { code: 'QUERY_TOO_COSTLY', maxBytes: 8 * 1024 * 1024 } })
  t.ok(Number(error?.extensions?.bytes) > 1000 * 4 * 60_000, 'worst case: 6 bytes a character')
  t.same(database.statements.filter((s) => DATA.test(s)), [], 'nothing was read')
  // Whole people, 1,000 a page, fit: about 6.5 KB each at worst.
  const page = await ask(url, admin, '{ people(limit: 1000) { id name age email address { street city country } } }')
  t.equal(page.status, 200, 'a page of whole people is within 8 MiB at worst')
  const one = await ask(url, admin, '{ people(limit: 130) { messages(limit: 1) { text } } }')
  t.equal(one.status, 200, '130 texts: 7.8 MB at worst, within')
  t.ok(one.bytes < RESPONSE_LIMITS.defaultMaxBytes)
})

t.test('a smaller MAX_RESPONSE_BYTES: GraphQL refuses what could exceed it, REST pages end early and link to the rest', async (t) => {
  const max = 1024 * 1024
  const { url, admin, people } = await seeded(t, { people: 1000, inboxes: 1, messages: 100 }, { maxResponseBytes: max })
  const [first] = people
  t.equal((await ask(url, admin, `{ person(id: "${first!.id}") { messages(limit: 20) { text } } }`)).status, 400, '20 texts: 1.2 MB at worst')
  t.equal((await ask(url, admin, `{ person(id: "${first!.id}") { messages(limit: 17) { text } } }`)).status, 200, '17 fit')

  const seen: string[] = []
  let next: string | undefined = `/person/${first!.id}/messages?limit=100`
  let pages = 0
  while (next !== undefined) {
    const response = await fetch(`${url}${next}`, { headers: admin })
    const body = await response.text()
    t.equal(response.status, 200)
    t.ok(Buffer.byteLength(body) <= max, `page ${++pages}: ${Buffer.byteLength(body)} bytes`)
    seen.push(...(JSON.parse(body) as Array<{ id: string }>).map((m) => m.id))
    next = nextLink(response.headers.get('link') ?? undefined)
  }
  t.equal(pages, 6, 'a page of 100 large messages ends after 17, the rest a Link away')
  t.equal(new Set(seen).size, 100, 'every message, once')

  const list = await fetch(`${url}/people?limit=1000`, { headers: admin })
  const text = await list.text()
  const names = JSON.parse(text) as unknown[]
  t.ok(names.length > 700 && names.length < 1000, `/people?limit=1000: ${names.length}, as many as fit 1 MiB at worst (200-character names, 6 bytes each)`)
  t.ok(Buffer.byteLength(text) <= max)
  t.ok(list.headers.get('link'), 'and a link to the rest')
})

t.test('introspection is priced by what it returns: charged like data, and the 30-alias schema walk is refused', async (t) => {
  const { app, url, admin } = await realServer(t)
  const key = { 'x-api-key': (await apiKeyOf(app, admin, { scopes: [] }))['x-api-key'] }
  const deep = '__schema { types { fields { type { ofType { ofType { fields { name type { name } } } } } } } directives { name args { name } } }'
  const aliased = `{ ${Array.from({ length: 30 }, (_, i) => `a${i}: ${deep}`).join(' ')} }`
  const refused = await ask(url, key, aliased)
  t.equal(refused.status, 400)
  t.match(refused.body.errors, [{ extensions: { code: 'QUERY_TOO_COSTLY' } }])
  t.ok(refused.ms < 1000, `refused in ${refused.ms.toFixed(0)} ms, before it ran`)

  const graphiql = await ask(url, key, getIntrospectionQuery())
  t.equal(graphiql.status, 200, 'GraphiQL\'s own schema query still runs')
  t.ok((graphiql.body.extensions?.cost?.charged ?? 0) >= 20, `and is charged ${graphiql.body.extensions?.cost?.charged} requests, not 1`)
  const small = await ask(url, key, '{ __schema { types { name } } }')
  t.ok((small.body.extensions?.cost?.requested ?? 0) > 0, `a list of the types costs ${small.body.extensions?.cost?.requested}, not 0`)
})
