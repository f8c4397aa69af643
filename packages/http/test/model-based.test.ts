import assert from 'node:assert/strict'
import type { Address, Message, Person } from '@people-service/domain'
import type { InjectOptions } from 'fastify'
import fc from 'fast-check'
import t from 'tap'
import { useFastCheckSeed } from './fast-check-seed.js'
import { build, callerIdOf, graphql, nextLink, postGraphQL, type Injector } from './helper.js'

/*
 * Model-based test: random sequences of create / update / delete / befriend /
 * unfriend / message, each sent through REST or GraphQL, valid or not, run
 * against the service and against a plain in-memory model of the public
 * contract (docs/API.md, and the rules of docs/REFERENCE.md). Every answer must be the one the
 * model predicts (status and error code; nothing changes on a refusal), and
 * after every step the people touched, and the list of everyone, look the
 * same through REST and GraphQL as in the model.
 *
 * Where the contract leaves something open, the model decides it:
 * - an invalid body is 400 whether or not the person exists (validation first);
 * - befriending or unfriending oneself is 400 whether or not the id names anyone;
 * - a string that is not well-formed Unicode (a lone surrogate) has no
 *   characters to count and is refused with 400;
 * - one e-mail rule for both APIs (one "@", no spaces, a dot in the domain):
 *   internationalised addresses such as zoë@bücher.de are valid;
 * - "case-insensitive" is JavaScript's toLowerCase on both sides.
 *
 * FAST_CHECK_SEED=random explores new sequences (fast-check-seed.ts).
 */

t.comment(`fast-check seed ${useFastCheckSeed()}`)

type Json<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] }
// The version travels as the ETag header, not in the body.
type PersonJson = Json<Omit<Person, 'version'>>
type MessageJson = Json<Message>
type Fields = Omit<PersonJson, 'createdAt' | 'updatedAt'>
type Summary = Pick<Person, 'id' | 'name'>

// ---------------------------------------------------------------- the model

interface ModelPerson extends Fields {
  /** As the service answered it; unknown until an answer shows it (GraphQL never does). */
  createdAt: string | undefined
  /** Unknown after an update answered through GraphQL, until an answer shows it. */
  updatedAt: string | undefined
  /** What updatedAt was last known to be: it never goes back. */
  updatedNotBefore: string
}

interface Model {
  /** The people who exist, by id. */
  people: Map<string, ModelPerson>
  /** Every id the service gave out, in order, deleted people's included. */
  issued: string[]
  /** Friendships as "a b" with a < b: friendship is mutual. */
  friendships: Set<string>
  /** Messages to people who exist, in the order they were sent. */
  messages: MessageJson[]
  /** Messages that went with their recipient. */
  gone: MessageJson[]
}

const emptyModel = (): Model => ({ people: new Map(), issued: [], friendships: new Set(), messages: [], gone: [] })

const pair = (a: string, b: string): string => (a < b ? `${a} ${b}` : `${b} ${a}`)
const byId = (a: { id: string }, b: { id: string }): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
const summary = ({ id, name }: Summary): Summary => ({ id, name })
const fieldsOf = ({ id, name, age, email, address }: Fields): Fields => ({ id, name, age, email, address })

const friendsOf = (m: Model, id: string): Summary[] =>
  [...m.people.values()].filter((p) => m.friendships.has(pair(id, p.id))).map(summary).sort(byId)

/** Newest first: the reverse of the order they were sent in. */
const inboxOf = (m: Model, id: string): MessageJson[] => m.messages.filter((message) => message.personId === id).reverse()

/** Case-insensitive substring. */
const listOf = (m: Model, needle = ''): Summary[] =>
  [...m.people.values()].filter((p) => p.name.toLowerCase().includes(needle.toLowerCase())).map(summary).sort(byId)

const removePerson = (m: Model, id: string): void => {
  m.people.delete(id)
  for (const key of m.friendships) if (key.split(' ').includes(id)) m.friendships.delete(key)
  m.gone.push(...m.messages.filter((message) => message.personId === id))
  m.messages = m.messages.filter((message) => message.personId !== id)
}

const mergeAddress = (current: Address | null, patch: unknown): Address | null => {
  if (patch === undefined) return current
  if (patch === null) return null
  return { street: null, city: null, country: null, ...current, ...patch as Partial<Address> }
}

/** A valid body applied to a person's fields: left out keeps, null clears, address merges. */
const applyBody = (current: Omit<Fields, 'id'>, body: Record<string, unknown>): Omit<Fields, 'id'> => ({
  name: 'name' in body ? body.name as string : current.name,
  age: 'age' in body ? body.age as number | null : current.age,
  email: 'email' in body ? body.email as string | null : current.email,
  address: mergeAddress(current.address, body.address)
})

const BLANK: Omit<Fields, 'id'> = { name: '', age: null, email: null, address: null }

// ------------------------------------------------------ generated input

/**
 * How wrong a value is. `type`: GraphQL refuses the request before anything
 * runs (400, `errors`, no `data`); `value`: the right type but against a rule,
 * so GraphQL answers a field error. REST answers 400 to both.
 */
type Level = 'ok' | 'value' | 'type'
interface Field { key: string, value: unknown, level: Level }

const worst = (levels: Level[]): Level => levels.includes('type') ? 'type' : levels.includes('value') ? 'value' : 'ok'

/** Present one time in two. */
const optional = (arb: fc.Arbitrary<Field>) => fc.option(arb, { nil: undefined, freq: 2 })
/** Present one time in `n`. */
const rarely = (arb: fc.Arbitrary<Field>, n: number) => fc.oneof({ weight: n - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb })

/** Characters are code points; a lone surrogate is no character at all. */
const textLevel = (text: string, min: number, max: number): Level => {
  const length = [...text].length
  return !/\p{Cs}/u.test(text) && length >= min && length <= max ? 'ok' : 'value'
}

// Letters with a case in several scripts, and LIKE's wildcards.
const LETTERS = [...'aAbBéÉüÜøØжЖ %_']

const someText = (max: number): fc.Arbitrary<string> => fc.oneof(
  { weight: 5, arbitrary: fc.string({ unit: fc.constantFrom(...LETTERS), minLength: 1, maxLength: 10 }) },
  { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }) },
  { weight: 1, arbitrary: fc.constantFrom('x'.repeat(max), 'x'.repeat(max + 1), '😀'.repeat(max), '😀'.repeat(max + 1), '\ud83d', 'a\udc00b') }
)

const textField = (key: string, min: number, max: number): fc.Arbitrary<Field> =>
  someText(max).map((value) => ({ key, value, level: textLevel(value, min, max) }))

// The contract's rules for names (NFC; no control or bidi-override character;
// something visible) and for a message's lines (no control but newline and tab).
const VISIBLE = /[^\p{White_Space}\p{Cc}\p{Cf}\p{M}\u115F\u1160\u3164\uFFA0\u2800]/u
const nameLevel = (name: string): Level =>
  /\p{Cc}|[\u202A-\u202E\u2066-\u2069]/u.test(name) || !VISIBLE.test(name) ? 'value' : textLevel(name, 1, 200)
const displayNameField = (key: string): fc.Arbitrary<Field> =>
  someText(200).map((raw) => raw.normalize('NFC')).map((value) => ({ key, value, level: nameLevel(value) }))
const linesField = (key: string, max: number): fc.Arbitrary<Field> =>
  someText(max).map((value) => ({ key, value, level: /[^\P{Cc}\n\t]/u.test(value) ? 'value' : textLevel(value, 1, max) }))

const field = (key: string, level: Level, ...values: unknown[]): fc.Arbitrary<Field> =>
  fc.constantFrom(...values).map((value) => ({ key, value, level }))

const nameField = (creating: boolean): fc.Arbitrary<Field> => fc.oneof(
  { weight: 16, arbitrary: displayNameField('name') },
  // `name: String!` on create; on update null is a value the domain refuses (a name cannot be cleared).
  { weight: 1, arbitrary: field('name', creating ? 'type' : 'value', null) },
  { weight: 1, arbitrary: field('name', 'type', 42, ['Ada']) }
)

const ageField: fc.Arbitrary<Field> = fc.oneof(
  { weight: 12, arbitrary: fc.integer({ min: 0, max: 150 }).map((value): Field => ({ key: 'age', value, level: 'ok' })) },
  { weight: 3, arbitrary: field('age', 'ok', null, 0, 150) },
  { weight: 1, arbitrary: field('age', 'value', -1, 151) },
  // Not a GraphQL Int: a fraction, text, a boolean, past 32 bits.
  { weight: 1, arbitrary: field('age', 'type', 36.5, '36', true, 2 ** 31) }
)

// 254 characters exactly: 'ab@' and a domain of four 61-letter labels and 'org'.
const LONGEST_EMAIL = `ab@${Array.from({ length: 4 }, (_, i) => String.fromCharCode(0x61 + i).repeat(61)).join('.')}.org`
assert.equal(LONGEST_EMAIL.length, 254)
// Also 254 characters, but 255 UTF-16 units: '𠮷' is one character outside the BMP.
const LONGEST_WIDE_EMAIL = `𠮷${LONGEST_EMAIL.slice(1)}`
assert.equal([...LONGEST_WIDE_EMAIL].length, 254)

const word = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'), minLength: 1, maxLength: 8 })
const emailField: fc.Arbitrary<Field> = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(word, word, fc.constantFrom('org', 'com', 'uk')).map(([local, domain, tld]): Field => ({ key: 'email', value: `${local}@${domain}.${tld}`, level: 'ok' })) },
  { weight: 5, arbitrary: field('email', 'ok', null, 'ada@example.org', 'a+tag@example.org', "o'brien@example.ie", 'josé@example.org', 'zoë@bücher.de', LONGEST_EMAIL, LONGEST_WIDE_EMAIL) },
  { weight: 2, arbitrary: field('email', 'value', 'nope', 'a@b', '@example.org', 'ada@', 'a b@example.org', 'a@b@example.org', '', `x${LONGEST_EMAIL}`) },
  { weight: 1, arbitrary: field('email', 'type', 42, { address: 'ada@example.org' }) }
)

const addressPart = (key: string): fc.Arbitrary<Field> => fc.oneof(
  { weight: 8, arbitrary: textField(key, 0, 200) },
  { weight: 2, arbitrary: field(key, 'ok', null) },
  { weight: 1, arbitrary: field(key, 'type', 5) }
)

const addressField: fc.Arbitrary<Field> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.tuple(
      fc.option(addressPart('street'), { nil: undefined }),
      fc.option(addressPart('city'), { nil: undefined }),
      fc.option(addressPart('country'), { nil: undefined }),
      rarely(field('zip', 'type', 'SW1Y 4LE'), 10)
    ).map((parts): Field => {
      const present = parts.filter((part) => part !== undefined)
      return { key: 'address', value: Object.fromEntries(present.map((p) => [p.key, p.value])), level: worst(present.map((p) => p.level)) }
    })
  },
  { weight: 3, arbitrary: field('address', 'ok', null) },
  { weight: 1, arbitrary: field('address', 'type', 'London', ['London']) }
)

// Fields no body may carry (`id` only selects the person, on POST /person).
const unknownField = fc.constantFrom<Field>(
  { key: 'nickname', value: 'Ada', level: 'type' },
  { key: 'createdAt', value: '2026-11-21T10:00:00.000Z', level: 'type' }
)

interface Body { fields: Field[], level: Level }

const bodyOf = (fields: Array<Field | undefined>, missing: Level = 'ok'): Body => {
  const present = fields.filter((f) => f !== undefined)
  return { fields: present, level: worst([missing, ...present.map((f) => f.level)]) }
}

const createBody: fc.Arbitrary<Body> = fc.tuple(
  fc.option(nameField(true), { freq: 12, nil: undefined }), optional(ageField), optional(emailField), optional(addressField), rarely(unknownField, 15)
).map(([name, ...rest]) => bodyOf([name, ...rest], name === undefined ? 'type' : 'ok'))

const patchBody: fc.Arbitrary<Body> = fc.tuple(
  optional(nameField(false)), optional(ageField), optional(emailField), optional(addressField), rarely(unknownField, 15)
).map((fields) => bodyOf(fields))

const payloadOf = (body: Body): Record<string, unknown> => Object.fromEntries(body.fields.map((f) => [f.key, f.value]))

/**
 * Who a command is about: someone who exists, anyone ever created, someone
 * deleted, a friend of the other person in the step, a well-formed id that
 * names nobody, or an id that is not well formed (a word, or a real id in
 * upper case). Picks are taken modulo the candidates when the step runs;
 * with no candidate at all, the id names nobody.
 */
type Ref = { kind: 'alive' | 'issued' | 'deleted' | 'friend', pick: number } | { kind: 'unknown' } | { kind: 'malformed', upper: boolean }

const UNKNOWN_ID = '00000000-0000-7000-8000-000000000000'

const picked = (kind: 'alive' | 'issued' | 'deleted' | 'friend') => fc.nat(99).map((pick): Ref => ({ kind, pick }))
const ref: fc.Arbitrary<Ref> = fc.oneof(
  { weight: 16, arbitrary: picked('alive') },
  { weight: 1, arbitrary: picked('issued') },
  { weight: 2, arbitrary: picked('deleted') },
  { weight: 1, arbitrary: fc.constant<Ref>({ kind: 'unknown' }) },
  { weight: 1, arbitrary: fc.boolean().map((upper): Ref => ({ kind: 'malformed', upper })) }
)
/** The second person of a friendship step: often a friend already, sometimes the first person again. */
const friendRef: fc.Arbitrary<Ref | 'self'> = fc.oneof(
  { weight: 8, arbitrary: ref },
  { weight: 3, arbitrary: picked('friend') },
  { weight: 1, arbitrary: fc.constant<'self'>('self') }
)

/**
 * `other`: the first person of the step, whom `alive` avoids when it can and
 * whose friends `friend` picks from (someone alive when they have none).
 */
const resolve = (m: Model, r: Ref, other?: string): string => {
  const among = (ids: string[], pick: number) => ids[pick % Math.max(ids.length, 1)] ?? UNKNOWN_ID
  switch (r.kind) {
    case 'alive': {
      const alive = [...m.people.keys()]
      const others = alive.filter((id) => id !== other)
      return among(others.length > 0 ? others : alive, r.pick)
    }
    case 'issued': return among(m.issued, r.pick)
    case 'deleted': return among(m.issued.filter((id) => !m.people.has(id)), r.pick)
    case 'friend': {
      const friends = other === undefined ? [] : friendsOf(m, other).map((f) => f.id)
      return friends.length > 0 ? among(friends, r.pick) : resolve(m, { kind: 'alive', pick: r.pick }, other)
    }
    case 'unknown': return UNKNOWN_ID
    case 'malformed': return r.upper && m.issued[0] !== undefined ? m.issued[0].toUpperCase() : 'nobody'
  }
}

const showRef = (r: Ref): string => 'pick' in r ? `${r.kind}#${r.pick}` : r.kind === 'malformed' ? `malformed${r.upper ? '(upper)' : ''}` : r.kind
const showBody = (body: Body): string => JSON.stringify(payloadOf(body), (_, v: unknown) => typeof v === 'string' && v.length > 24 ? `${v.slice(0, 8)}…(${[...v].length} characters)` : v)

// ------------------------------------------------------- talking to the service

interface Real { api: Injector, senderId: string }

type Transport = 'rest' | 'graphql'
const transport = fc.constantFrom<Transport>('rest', 'graphql')

type Code = 'VALIDATION_FAILED' | 'SELF_FRIENDSHIP' | 'PERSON_NOT_FOUND'
type Expected = { ok: true } | { ok: false, status: 400 | 404, code: Code, graphql: 'request' | 'field' }

const OK: Expected = { ok: true }
// GraphQL refuses a bad input before running anything, whether its type or its value is wrong.
const INVALID: Expected = { ok: false, status: 400, code: 'VALIDATION_FAILED', graphql: 'request' }
const SELF: Expected = { ok: false, status: 400, code: 'SELF_FRIENDSHIP', graphql: 'field' }
const MISSING: Expected = { ok: false, status: 404, code: 'PERSON_NOT_FOUND', graphql: 'field' }

/** Tallies of what ran and how it ended: every kind of step must have been exercised. */
const tally = new Map<string, number>()
const count = (name: string, how: Transport, expected: Expected): void => {
  const key = `${name} ${how} ${expected.ok ? 'ok' : `${expected.status} ${expected.code}`}`
  tally.set(key, (tally.get(key) ?? 0) + 1)
}

interface Request {
  /** What the step is, for messages. */
  step: string
  rest: InjectOptions
  /** The status REST answers on success. */
  created?: boolean
  query: string
  variables: Record<string, unknown>
  /** The mutation field whose value is the answer. */
  field: string
}

interface Answer { value: unknown, location?: string | undefined }

/**
 * Sends one step through one transport and checks the answer is the one the
 * model predicts; answers the value on success, undefined on a refusal.
 */
const perform = async (real: Real, how: Transport, expected: Expected, request: Request): Promise<Answer | undefined> => {
  if (how === 'rest') {
    const response = await real.api.inject(request.rest)
    const body = response.json<Record<string, unknown>>()
    const what = `${request.step} over REST answered ${response.statusCode} ${response.body.slice(0, 300)}`
    if (expected.ok) {
      assert.equal(response.statusCode, request.created ? 201 : 200, what)
      return { value: body, location: response.headers.location as string | undefined }
    }
    assert.equal(response.statusCode, expected.status, what)
    assert.equal(body.code, expected.code, what)
    return undefined
  }
  const { status, body } = await graphql(real.api, postGraphQL(request.query, request.variables))
  const what = `${request.step} over GraphQL answered ${status} ${JSON.stringify(body).slice(0, 300)}`
  if (expected.ok) {
    assert.equal(status, 200, what)
    assert.equal(body.errors, undefined, what)
    return { value: body.data?.[request.field] }
  }
  if (expected.graphql === 'request') {
    assert.equal(status, 400, what)
    assert.ok(body.errors !== undefined && body.errors.length > 0 && !('data' in body), what)
    return undefined
  }
  assert.equal(status, 200, what)
  assert.equal(body.data, null, what)
  assert.equal(body.errors?.[0]?.extensions?.code, expected.code, what)
  return undefined
}

const isIsoTime = (value: unknown): boolean => typeof value === 'string' && !Number.isNaN(Date.parse(value)) && new Date(value).toISOString() === value

/** Checks the timestamps an answer shows against what the model knows of them, and learns them. */
const seeTimestamps = (person: ModelPerson, json: Record<string, unknown>, updatedNow = false): void => {
  const { createdAt, updatedAt } = json
  assert.ok(isIsoTime(createdAt) && isIsoTime(updatedAt), `timestamps are ISO 8601: ${String(createdAt)} ${String(updatedAt)}`)
  const [created, updated] = [createdAt as string, updatedAt as string]
  if (person.createdAt === undefined) person.createdAt = created
  assert.equal(created, person.createdAt, 'createdAt never changes')
  if (updatedNow || person.updatedAt === undefined) {
    assert.ok(updated >= person.updatedNotBefore && updated >= created, `updatedAt ${updated} does not go back (${person.updatedNotBefore})`)
    person.updatedAt = updated
    person.updatedNotBefore = updated
  }
  assert.equal(updated, person.updatedAt, 'updatedAt changes only with an update')
}

const PERSON_FIELDS = 'id name age email address { street city country }'
const MESSAGE_FIELDS = 'id text senderId sentAt person { id }'
const asGraphQLMessage = ({ id, text, senderId, sentAt, personId }: MessageJson) => ({ id, text, senderId, sentAt, person: { id: personId } })
const path = (id: string): string => `/person/${encodeURIComponent(id)}`

/** A person as REST and GraphQL show them (fields, friends, inbox) against the model; 404 and null when gone. */
const agreeOnPerson = async (m: Model, real: Real, id: string): Promise<void> => {
  const person = m.people.get(id)
  const [one, friends, inbox] = [
    await real.api.inject(path(id)),
    await real.api.inject(`${path(id)}/friends?limit=100`),
    await real.api.inject(`${path(id)}/messages?limit=100`)
  ]
  const { status, body } = await graphql(real.api, postGraphQL(
    `query ($id: ID!) { person(id: $id) { ${PERSON_FIELDS} friends(limit: 100) { id name } messages(limit: 100) { ${MESSAGE_FIELDS} } } }`,
    { id }
  ))
  assert.equal(status, 200, JSON.stringify(body))
  assert.equal(body.errors, undefined, JSON.stringify(body.errors))
  if (person === undefined) {
    for (const response of [one, friends, inbox]) {
      assert.equal(response.statusCode, 404, `${id} is nobody, yet ${response.body}`)
      assert.equal(response.json<{ code: string }>().code, 'PERSON_NOT_FOUND')
    }
    assert.deepEqual(body.data, { person: null }, `${id} is nobody, yet GraphQL shows them`)
    return
  }
  assert.equal(one.statusCode, 200, one.body)
  const json = one.json<PersonJson>()
  assert.deepEqual(json, { ...fieldsOf(person), createdAt: json.createdAt, updatedAt: json.updatedAt }, `GET ${path(id)}`)
  seeTimestamps(person, json)
  assert.equal(friends.statusCode, 200, friends.body)
  assert.deepEqual(friends.json(), friendsOf(m, id), `GET ${path(id)}/friends`)
  assert.equal(inbox.statusCode, 200, inbox.body)
  assert.deepEqual(inbox.json(), inboxOf(m, id), `GET ${path(id)}/messages`)
  assert.deepEqual(body.data, {
    person: { ...fieldsOf(person), friends: friendsOf(m, id), messages: inboxOf(m, id).map(asGraphQLMessage) }
  }, `GraphQL person(id: "${id}")`)
}

const agreeOnMessage = async (m: Model, real: Real, message: MessageJson): Promise<void> => {
  const exists = m.messages.some((other) => other.id === message.id)
  const response = await real.api.inject(`/message/${message.id}`)
  const { body } = await graphql(real.api, postGraphQL(`query ($id: ID!) { message(id: $id) { ${MESSAGE_FIELDS} } }`, { id: message.id }))
  if (exists) {
    assert.equal(response.statusCode, 200, response.body)
    assert.deepEqual(response.json(), message, `GET /message/${message.id}`)
    assert.deepEqual(body, { data: { message: asGraphQLMessage(message) } }, `GraphQL message(id: "${message.id}")`)
  } else {
    assert.equal(response.statusCode, 404, `message ${message.id} went with its recipient, yet ${response.body}`)
    assert.deepEqual(body, { data: { message: null } }, `message ${message.id} went with its recipient, yet GraphQL shows it`)
  }
}

/** Everyone, in one GraphQL list: a refused step created or removed nobody. */
const agreeOnEveryone = async (m: Model, real: Real): Promise<void> => {
  const { body } = await graphql(real.api, postGraphQL('{ people(limit: 1000) { id name } }'))
  assert.deepEqual(body, { data: { people: listOf(m) } }, 'GraphQL people')
}

/** Follows `Link: <…>; rel="next"` from the first page to the last. */
const pagesOf = async (real: Real, limit: number, name: string | undefined): Promise<unknown[]> => {
  const pages: unknown[] = []
  let url: string | undefined = `/people?limit=${limit}${name === undefined ? '' : `&name=${encodeURIComponent(name)}`}`
  while (url !== undefined) {
    assert.ok(pages.length <= 1000, 'the pages end')
    const response = await real.api.inject(url)
    assert.equal(response.statusCode, 200, `GET ${url}: ${response.body}`)
    pages.push(response.json())
    const link = response.headers.link
    if (link === undefined) break
    const next = nextLink(link)
    assert.ok(next !== undefined, `a Link header of one next page: ${String(link)}`)
    url = next
  }
  return pages
}

const chunks = <T>(items: T[], size: number): T[][] =>
  items.length === 0 ? [[]] : Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size))

const agreeOnList = async (m: Model, real: Real, limit: number, name?: string): Promise<void> => {
  const query = 'query ($name: String) { people(limit: 1000, name: $name) { id name } }'
  if (name === '') {
    // A name filter is 1–200 characters, in REST as in GraphQL.
    const rest = await real.api.inject(`/people?limit=${limit}&name=`)
    assert.equal(rest.statusCode, 400, `GET /people?name= : ${rest.body}`)
    assert.equal(rest.json().code, 'VALIDATION_FAILED')
    const { status, body } = await graphql(real.api, postGraphQL(query, { name }))
    assert.equal(status, 400, `GraphQL people(name: ""): ${JSON.stringify(body)}`)
    return
  }
  assert.deepEqual(await pagesOf(real, limit, name), chunks(listOf(m, name), limit), `GET /people?limit=${limit}&name=${String(name)}, page by page`)
  const { body } = await graphql(real.api, postGraphQL(query, { name: name ?? null }))
  assert.deepEqual(body, { data: { people: listOf(m, name) } }, `GraphQL people(name: ${JSON.stringify(name)})`)
}

/** After a step: the people it touched, the messages it touched, and everyone's ids and names. */
const agree = async (m: Model, real: Real, ids: string[], messages: MessageJson[] = []): Promise<void> => {
  for (const id of new Set(ids)) await agreeOnPerson(m, real, id)
  for (const message of messages) await agreeOnMessage(m, real, message)
  await agreeOnEveryone(m, real)
}

// ---------------------------------------------------------------- commands

type Step = fc.AsyncCommand<Model, Real>

class CreatePerson implements Step {
  constructor (readonly how: Transport, readonly body: Body) {}
  check = () => true
  async run (m: Model, real: Real): Promise<void> {
    const expected = this.body.level === 'ok' ? OK : INVALID
    count('CreatePerson', this.how, expected)
    const payload = payloadOf(this.body)
    const answer = await perform(real, this.how, expected, {
      step: this.toString(),
      rest: { method: 'POST', url: '/person', payload },
      created: true,
      query: `mutation ($input: PersonInput!) { createPerson(input: $input) { ${PERSON_FIELDS} } }`,
      variables: { input: payload },
      field: 'createPerson'
    })
    if (answer !== undefined) {
      const json = answer.value as Record<string, unknown> & Fields
      assert.ok(typeof json.id === 'string' && !m.issued.includes(json.id), `a new id: ${String(json.id)}`)
      const person: ModelPerson = { id: json.id, ...applyBody(BLANK, payload), createdAt: undefined, updatedAt: undefined, updatedNotBefore: '' }
      if (this.how === 'rest') {
        assert.deepEqual(json, { ...fieldsOf(person), createdAt: json.createdAt, updatedAt: json.updatedAt }, 'the created person')
        assert.equal(json.createdAt, json.updatedAt, 'a new person was updated when created')
        assert.equal(answer.location, `/person/${json.id}`, 'Location')
        seeTimestamps(person, json)
      } else {
        assert.deepEqual(json, fieldsOf(person), 'the created person')
      }
      m.people.set(person.id, person)
      m.issued.push(person.id)
    }
    await agree(m, real, [])
  }

  toString = () => `CreatePerson(${this.how}, ${showBody(this.body)})`
}

type UpdateRoute = 'PUT' | 'PATCH' | 'POST' | 'POST /person'

class UpdatePerson implements Step {
  constructor (readonly how: Transport, readonly route: UpdateRoute, readonly who: Ref, readonly body: Body) {}
  check = () => true
  async run (m: Model, real: Real): Promise<void> {
    const id = resolve(m, this.who)
    const current = m.people.get(id)
    const expected = this.body.level !== 'ok' ? INVALID : current === undefined ? MISSING : OK
    count('UpdatePerson', this.how, expected)
    const payload = payloadOf(this.body)
    const answer = await perform(real, this.how, expected, {
      step: `${this.toString()} on ${id}`,
      rest: this.route === 'POST /person'
        ? { method: 'POST', url: '/person', payload: { id, ...payload } }
        : { method: this.route, url: path(id), payload },
      query: `mutation ($id: ID!, $input: PersonPatch!) { updatePerson(id: $id, input: $input) { ${PERSON_FIELDS} } }`,
      variables: { id, input: payload },
      field: 'updatePerson'
    })
    if (answer !== undefined && current !== undefined) {
      const json = answer.value as Record<string, unknown>
      Object.assign(current, applyBody(current, payload))
      if (this.how === 'rest') {
        assert.deepEqual(json, { ...fieldsOf(current), createdAt: json.createdAt, updatedAt: json.updatedAt }, 'the updated person')
        seeTimestamps(current, json, true)
      } else {
        assert.deepEqual(json, fieldsOf(current), 'the updated person')
        current.updatedAt = undefined
      }
    }
    await agree(m, real, [id])
  }

  toString = () => `UpdatePerson(${this.how}${this.how === 'rest' ? ` ${this.route}` : ''}, ${showRef(this.who)}, ${showBody(this.body)})`
}

class DeletePerson implements Step {
  constructor (readonly how: Transport, readonly who: Ref) {}
  check = () => true
  async run (m: Model, real: Real): Promise<void> {
    const id = resolve(m, this.who)
    const expected = m.people.has(id) ? OK : MISSING
    count('DeletePerson', this.how, expected)
    const friends = friendsOf(m, id).map((f) => f.id)
    const messages = inboxOf(m, id).slice(0, 3)
    const answer = await perform(real, this.how, expected, {
      step: `${this.toString()} on ${id}`,
      rest: { method: 'DELETE', url: path(id) },
      query: 'mutation ($id: ID!) { deletePerson(id: $id) }',
      variables: { id },
      field: 'deletePerson'
    })
    if (answer !== undefined) {
      assert.deepEqual(answer.value, this.how === 'rest' ? { id, deleted: true } : id, 'the deletion')
      removePerson(m, id)
    }
    // Their friends lose them; their messages are gone with them.
    await agree(m, real, [id, ...friends], messages)
  }

  toString = () => `DeletePerson(${this.how}, ${showRef(this.who)})`
}

class Friendship implements Step {
  constructor (readonly ending: boolean, readonly how: Transport, readonly who: Ref, readonly friend: Ref | 'self') {}
  check = () => true
  async run (m: Model, real: Real): Promise<void> {
    const id = resolve(m, this.who)
    const friendId = this.friend === 'self' ? id : resolve(m, this.friend, id)
    const expected = id === friendId ? SELF : !m.people.has(id) || !m.people.has(friendId) ? MISSING : OK
    const again = m.friendships.has(pair(id, friendId)) ? ' again' : ''
    count(`${this.ending ? 'Unfriend' : 'Befriend'}${again}`, this.how, expected)
    const mutation = this.ending ? 'removeFriend' : 'addFriend'
    const answer = await perform(real, this.how, expected, {
      step: `${this.toString()} on ${id} and ${friendId}`,
      rest: { method: this.ending ? 'DELETE' : 'PUT', url: `${path(id)}/friends/${encodeURIComponent(friendId)}` },
      query: `mutation ($a: ID!, $b: ID!) { ${mutation}(personId: $a, friendId: $b) { id friends(limit: 100) { id name } } }`,
      variables: { a: id, b: friendId },
      field: mutation
    })
    if (answer !== undefined) {
      if (this.ending) m.friendships.delete(pair(id, friendId))
      else m.friendships.add(pair(id, friendId))
      assert.deepEqual(answer.value, this.how === 'rest'
        ? { personId: id, friendId, ...(this.ending ? { deleted: true } : {}) }
        : { id, friends: friendsOf(m, id) }, `the ${mutation} answer`)
    }
    await agree(m, real, [id, friendId])
  }

  toString = () => `${this.ending ? 'Unfriend' : 'Befriend'}(${this.how}, ${showRef(this.who)}, ${this.friend === 'self' ? 'self' : showRef(this.friend)})`
}

class SendMessage implements Step {
  constructor (readonly how: Transport, readonly to: Ref, readonly text: Field) {}
  check = () => true
  async run (m: Model, real: Real): Promise<void> {
    const personId = resolve(m, this.to)
    const expected = this.text.level !== 'ok' ? INVALID : m.people.has(personId) ? OK : MISSING
    count(m.issued.includes(personId) && !m.people.has(personId) ? 'SendMessage to someone deleted' : 'SendMessage', this.how, expected)
    const answer = await perform(real, this.how, expected, {
      step: `${this.toString()} to ${personId}`,
      rest: { method: 'POST', url: '/message', payload: { personId, text: this.text.value } },
      created: true,
      query: `mutation ($personId: ID!, $text: String!) { sendMessage(personId: $personId, text: $text) { ${MESSAGE_FIELDS} } }`,
      variables: { personId, text: this.text.value },
      field: 'sendMessage'
    })
    const sent: MessageJson[] = []
    if (answer !== undefined) {
      const json = answer.value as Record<string, unknown>
      const id = json.id as string
      assert.ok(typeof id === 'string' && ![...m.messages, ...m.gone].some((other) => other.id === id), `a new message id: ${id}`)
      assert.ok(isIsoTime(json.sentAt), `sentAt is ISO 8601: ${String(json.sentAt)}`)
      const message: MessageJson = { id, personId, text: this.text.value as string, senderId: real.senderId, sentAt: json.sentAt as string }
      if (this.how === 'rest') {
        assert.deepEqual(json, message, 'the sent message')
        assert.equal(answer.location, `/message/${id}`, 'Location')
      } else {
        assert.deepEqual(json, asGraphQLMessage(message), 'the sent message')
      }
      m.messages.push(message)
      sent.push(message)
    }
    await agree(m, real, [personId], sent)
  }

  toString = () => `SendMessage(${this.how}, ${showRef(this.to)}, ${showBody({ fields: [this.text], level: this.text.level })})`
}

/** A needle cut from someone's name, its letters' case flipped here and there. */
interface Needle { pick: number, start: number, length: number, upper: boolean[] }

class ListPeople implements Step {
  constructor (readonly limit: number, readonly needle: Needle | string | undefined) {}
  check = () => true
  async run (m: Model, real: Real): Promise<void> {
    count('ListPeople', 'rest', OK)
    await agreeOnList(m, real, this.limit, this.resolveNeedle(m))
  }

  resolveNeedle (m: Model): string | undefined {
    if (typeof this.needle !== 'object') return this.needle
    const { pick, start, length, upper } = this.needle
    const people = [...m.people.values()]
    const letters = [...people[pick % Math.max(people.length, 1)]?.name ?? 'a']
    const from = start % (letters.length + 1)
    return letters.slice(from, from + length).map((c, i) => (upper[i % upper.length] ? c.toUpperCase() : c.toLowerCase())).join('')
  }

  toString = () => `ListPeople(limit ${this.limit}, name ${JSON.stringify(this.needle)})`
}

const create = fc.tuple(transport, createBody).map(([how, body]) => new CreatePerson(how, body))
/** A few people to start from, created through both APIs, so that most steps find someone to act on. */
const population = fc.array(
  fc.tuple(transport, createBody.filter((body) => body.level === 'ok')).map(([how, body]) => new CreatePerson(how, body)),
  { minLength: 2, maxLength: 6 }
)
const friendship = fc.tuple(fc.nat(2).map((n) => n === 0), transport, ref, friendRef)
  .map(([ending, how, who, friend]) => new Friendship(ending, how, who, friend))
// fc.commands picks among these evenly: creating is listed twice to keep people
// coming, friendships twice because each needs two people and ends one time in three.
const steps: Array<fc.Arbitrary<Step>> = [
  create,
  create,
  fc.tuple(transport, fc.constantFrom<UpdateRoute>('PUT', 'PATCH', 'POST', 'POST /person'), ref, patchBody)
    .map(([how, route, who, body]) => new UpdatePerson(how, route, who, body)),
  fc.tuple(transport, ref).map(([how, who]) => new DeletePerson(how, who)),
  friendship,
  friendship,
  fc.tuple(transport, ref, fc.oneof(
    { weight: 12, arbitrary: linesField('text', 10_000) },
    { weight: 1, arbitrary: field('text', 'type', null, undefined, 42) }
  )).map(([how, to, text]) => new SendMessage(how, to, text)),
  fc.tuple(
    fc.integer({ min: 1, max: 4 }),
    fc.oneof(
      fc.record({ pick: fc.nat(99), start: fc.nat(10), length: fc.integer({ min: 0, max: 4 }), upper: fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }) }),
      fc.string({ unit: fc.constantFrom(...LETTERS), maxLength: 3 }),
      fc.constant(undefined)
    )
  ).map(([limit, needle]) => new ListPeople(limit, needle))
]

// Thousands of requests from one caller are the point: rate limits off.
// A whole inbox of 100 texts costs 10,100 and more: the comparison reads it in one query.
const NO_LIMITS = { access: { limits: { max: 0 } }, graphqlMaxCost: 100_000 }

/**
 * The service under test. Building one takes a while, so a run that ends
 * clean (its people deleted, the list empty again) hands it to the next;
 * a run that fails leaves it behind and the next one builds anew.
 */
interface Service { real: Real, close: () => Promise<void> }
let service: Service | undefined

const freshService = async (): Promise<Service> => {
  if (service !== undefined) return service
  const closers: Array<() => unknown> = []
  const { app, api, admin } = await build({ teardown: (fn) => { closers.push(fn) } }, NO_LIMITS)
  const close = async () => { for (const fn of closers.reverse()) await fn() }
  service = { real: { api, senderId: await callerIdOf(app, admin) }, close }
  return service
}

/** Deletes everyone the model knows of; the service must then hold nobody. */
const emptied = async (m: Model, real: Real): Promise<void> => {
  for (const id of m.people.keys()) assert.equal((await real.api.inject({ method: 'DELETE', url: path(id) })).statusCode, 200)
  assert.deepEqual((await real.api.inject('/people')).json(), [], 'nobody is left')
}

t.test('REST and GraphQL agree with a model of the contract, step by step', async (t) => {
  const started = Date.now()
  t.teardown(async () => { await service?.close() })
  await fc.assert(fc.asyncProperty(population, fc.commands(steps, { maxCommands: 30, size: 'max' }), async (first, commands) => {
    const { real, close } = await freshService()
    let clean = false
    try {
      const model = emptyModel()
      for (const step of first) await step.run(model, real)
      await fc.asyncModelRun(() => ({ model, real }), commands)
      // At the end: every page of every list, everyone, every message ever sent.
      await agreeOnList(model, real, 2)
      for (const id of model.issued) await agreeOnPerson(model, real, id)
      for (const message of [...model.messages, ...model.gone]) await agreeOnMessage(model, real, message)
      await emptied(model, real)
      clean = true
    } finally {
      if (!clean) {
        service = undefined
        await close()
      }
    }
  }), { numRuns: 50 })
  t.comment(`${[...tally.values()].reduce((a, b) => a + b, 0)} steps in ${Date.now() - started} ms`)
  t.comment([...tally].sort().map(([key, n]) => `${key}: ${n}`).join('\n'))
  const ran = [...tally.keys()]
  // Each must have run at least once (a prefix of the tally's keys).
  const needed = [
    'CreatePerson rest ok', 'CreatePerson graphql ok', 'CreatePerson rest 400 VALIDATION_FAILED', 'CreatePerson graphql 400 VALIDATION_FAILED',
    'UpdatePerson rest ok', 'UpdatePerson graphql ok', 'UpdatePerson rest 404 PERSON_NOT_FOUND', 'UpdatePerson graphql 400 VALIDATION_FAILED',
    'DeletePerson rest ok', 'DeletePerson graphql ok', 'DeletePerson rest 404 PERSON_NOT_FOUND', 'DeletePerson graphql 404 PERSON_NOT_FOUND',
    'Befriend rest ok', 'Befriend graphql ok', 'Befriend rest 400 SELF_FRIENDSHIP', 'Befriend graphql 404 PERSON_NOT_FOUND',
    'Unfriend rest ok', 'Unfriend graphql ok', 'Unfriend graphql 400 SELF_FRIENDSHIP',
    'SendMessage rest ok', 'SendMessage graphql ok', 'SendMessage rest 404 PERSON_NOT_FOUND', 'SendMessage graphql 400 VALIDATION_FAILED',
    'Befriend again', 'SendMessage to someone deleted', 'ListPeople rest ok'
  ]
  t.same(needed.filter((key) => !ran.some((k) => k.startsWith(key))), [], 'every kind of step ran, accepted and refused, through both APIs')
})
