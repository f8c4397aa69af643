import assert from 'node:assert/strict'
import { DomainError } from '../errors.js'
import type { Account } from '../account/account.js'
import type { ApiKey } from '../api-key/api-key.js'
import type { Message } from '../message/message.js'
import type { Person, PersonSummary } from '../person/person.js'
import type { PersonSelection } from '../person/person-projection.js'
import { referenceProjections } from '../person/reference-projections.js'
import { summariesJsonOf } from '../person/summaries-json.js'
import type { Ports } from '../ports.js'
import { uuidv7Generator } from '../shared/ids.js'
import type { StoredWebhook } from '../webhook/webhook.js'
import { idempotencyContract } from './idempotency-contract.js'

/**
 * Behaviour every storage adapter must show, whatever the database. Runner
 * agnostic: each case throws (node:assert) on failure, so any test runner can
 * call it with a fresh, empty set of repositories.
 */
export type RepositoryPorts = Pick<Ports, 'people' | 'friendships' | 'projections' | 'messages' | 'accounts' | 'apiKeys' | 'apiKeyUsage' | 'idempotency' | 'unitOfWork' | 'webhooks'>

export interface ContractCase {
  name: string
  run(ports: RepositoryPorts): Promise<void>
}

const ids = uuidv7Generator()
let tick = Date.parse('2026-01-01T00:00:00.000Z')
const at = (): Date => new Date(tick += 1000)

const person = (fields: Partial<Person> = {}): Person => {
  const now = at()
  return { id: ids.next(), name: 'Ada Lovelace', age: 36, email: 'ada@example.org', address: { street: '12 St James\'s Square', city: 'London', country: 'UK' }, createdAt: now, updatedAt: now, version: 1, ...fields }
}

const message = (personId: string, fields: Partial<Message> = {}): Message =>
  ({ id: ids.next(), personId, text: 'hello', senderId: 'sender-1', sentAt: at(), ...fields })

const account = (fields: Partial<Account> = {}): Account =>
  ({ id: ids.next(), username: `user-${ids.next().slice(-12)}`, role: 'editor', passwordHash: '$scrypt$ln=10,r=8,p=1$c2FsdA$aGFzaA', disabled: false, tokenVersion: 0, deleting: false, createdAt: at(), ...fields })

const apiKey = (ownerId: string, fields: Partial<ApiKey> = {}): ApiKey => {
  const id = ids.next()
  return { id, ownerId, name: 'ci', scopes: ['people:read'], rateLimit: null, lookupId: id.slice(-11), secretHash: `hash-${id}`, createdAt: at(), revokedAt: null, ...fields }
}

const insertPeople = async ({ people }: RepositoryPorts, count: number, fields: Partial<Person> = {}): Promise<Person[]> => {
  const created: Person[] = []
  for (let i = 0; i < count; i++) {
    const p = person({ name: `Person ${i}`, ...fields })
    await people.insert(p)
    created.push(p)
  }
  return created
}

const rejectsWithCode = async (promise: Promise<unknown>, code: string): Promise<void> => {
  await assert.rejects(promise, (error: unknown) => error instanceof DomainError && error.code === code)
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

const sortedIds = (items: Array<{ id: string }>): string[] => items.map((p) => p.id).sort()

export const repositoryContract: ContractCase[] = [
  {
    name: 'a stored person reads back field for field',
    async run ({ people }) {
      const full = person({ name: 'Zoë Ångström 😀' })
      const bare = person({ age: null, email: null, address: null })
      const partial = person({ address: { street: null, city: 'Paris', country: null } })
      for (const p of [full, bare, partial]) await people.insert(p)
      for (const p of [full, bare, partial]) assert.deepEqual(await people.findById(p.id), p)
    }
  },
  {
    name: 'an unknown id finds nothing',
    async run ({ people }) {
      assert.equal(await people.findById(ids.next()), undefined)
      assert.deepEqual(await people.findByIds([ids.next()]), [])
    }
  },
  {
    name: 'findByIds returns exactly the people that exist',
    async run (ports) {
      const [a, b] = await insertPeople(ports, 3)
      const found = await ports.people.findByIds([a!.id, b!.id, ids.next()])
      assert.deepEqual(sortedIds(found), sortedIds([a!, b!]))
    }
  },
  {
    name: 'list pages through people in id order with a key',
    async run (ports) {
      const created = await insertPeople(ports, 5)
      const expected = created.map(({ id, name }) => ({ id, name })).sort((x, y) => (x.id < y.id ? -1 : 1))
      assert.deepEqual(await ports.people.list({ limit: 3 }), expected.slice(0, 3))
      assert.deepEqual(await ports.people.list({ limit: 3, afterId: expected[2]!.id }), expected.slice(3))
      assert.deepEqual(await ports.people.list({ limit: 3, afterId: expected[4]!.id }), [])
    }
  },
  {
    name: 'a page as JSON is, byte for byte, the page list() gives as JSON.stringify writes it',
    async run ({ people }) {
      const listJson = people.listJson?.bind(people)
      assert.ok(listJson, 'the adapter builds pages as JSON')
      const names = ['Zoë "Q" O\'Brien \\ back/slash', 'tab\tnew\nline\r\b\f \u0001\u001f\u007f end', 'Grüße 👋 \u2028\u2029 </script>', 'Ada Lovelace', 'Ada Byron']
      for (const name of names) await people.insert(person({ name }))
      for (const query of [{ limit: 2 }, { limit: 10 }, { limit: 0 }, { limit: 3, nameContains: 'ada' }, { limit: 1, nameContains: 'ada' }, { limit: 5, nameContains: 'nobody' }]) {
        const expected = await summariesJsonOf(people, query)
        assert.deepEqual(await listJson(query), expected, JSON.stringify(query))
        const after = (JSON.parse(expected.json) as PersonSummary[]).at(0)?.id
        if (after !== undefined) {
          const rest = (await people.list({ ...query, afterId: after, limit: 10 }))
          assert.equal((await listJson({ ...query, afterId: after, limit: 10 })).json, JSON.stringify(rest), `after ${after}`)
        }
      }
    }
  },
  {
    name: 'list filters by a case-insensitive substring of the name',
    async run ({ people }) {
      const ada = person({ name: 'Ada Lovelace' })
      const grace = person({ name: 'Grace Hopper' })
      const alan = person({ name: 'alan turing' })
      for (const p of [ada, grace, alan]) await people.insert(p)
      assert.deepEqual(await people.list({ limit: 10, nameContains: 'LOVE' }), [{ id: ada.id, name: ada.name }])
      assert.deepEqual(sortedIds(await people.list({ limit: 10, nameContains: 'a' })), sortedIds([ada, grace, alan]))
      assert.deepEqual(await people.list({ limit: 10, nameContains: 'Turing' }), [{ id: alan.id, name: alan.name }])
      assert.deepEqual(await people.list({ limit: 10, nameContains: '%' }), [])
      assert.deepEqual(await people.list({ limit: 10, nameContains: 'zzz' }), [])
    }
  },
  {
    name: 'list ignores case beyond ASCII, in short needles and long',
    async run ({ people }) {
      const elodie = person({ name: 'Élodie Durand' })
      const zhanna = person({ name: 'жанна иванова' })
      // Scripts whose case pairs came after Unicode 6.1: Georgian Mtavruli, Cherokee.
      const jana = person({ name: 'ᲯᲐᲜᲐ' })
      const cherokee = person({ name: 'ꭰꭱꭲ' })
      for (const p of [elodie, zhanna, jana, cherokee]) await people.insert(p)
      const found = async (needle: string) => (await people.list({ limit: 10, nameContains: needle })).map((p) => p.name)
      assert.deepEqual(await found('é'), [elodie.name])
      assert.deepEqual(await found('élodie'), [elodie.name])
      assert.deepEqual(await found('ÉLO'), [elodie.name])
      assert.deepEqual(await found('Ж'), [zhanna.name])
      assert.deepEqual(await found('ЖАННА И'), [zhanna.name])
      assert.deepEqual(await found('ჯანა'), [jana.name])
      assert.deepEqual(await found('ჯ'), [jana.name])
      assert.deepEqual(await found('ᎠᎡᎢ'), [cherokee.name])
      assert.deepEqual(await found('Ꭰ'), [cherokee.name])
    }
  },
  {
    name: 'list finds a Greek word by its first letters in capitals: a sigma is a sigma wherever it stands',
    async run ({ people }) {
      const odysseus = person({ name: 'ΟΔΥΣΣΕΥΣ Λαέρτιος' })
      const nobody = person({ name: 'Σίσυφος' })
      for (const p of [odysseus, nobody]) await people.insert(p)
      const found = async (needle: string) => (await people.list({ limit: 10, nameContains: needle })).map((p) => p.name)
      // toLowerCase alone turns a Σ that ends the needle into ς, which the name holds as σ.
      for (const needle of ['ΟΔΥΣ', 'ΔΥΣ', 'οδυς', 'οδυσ', 'ΟΔΥΣΣΕΥΣ', 'οδυσσευσ', 'ΛΑΈΡΤΙΟΣ', 'λαέρτιοσ']) {
        assert.deepEqual(await found(needle), [odysseus.name], needle)
      }
      assert.deepEqual(await found('ΣΊΣ'), [nobody.name])
      for (const needle of ['ς', 'σ', 'Σ']) assert.deepEqual(await found(needle), [odysseus.name, nobody.name], `${needle}: every name holding a sigma`)
    }
  },
  {
    name: 'update replaces the fields of an existing person only',
    async run ({ people }) {
      const p = person()
      await people.insert(p)
      const changed: Person = { ...p, name: 'Augusta Ada King', address: null, email: null, updatedAt: at(), version: 2 }
      assert.equal(await people.update(changed, 1), true)
      assert.deepEqual(await people.findById(p.id), changed)
      const absent = person()
      assert.equal(await people.update({ ...absent, version: 2 }, 1), false)
      assert.equal(await people.findById(absent.id), undefined)
    }
  },
  {
    name: 'update and delete hold only at the version expected, so of two writers on one version one wins',
    async run ({ people }) {
      const p = person()
      await people.insert(p)
      const first: Person = { ...p, name: 'First', updatedAt: at(), version: 2 }
      const second: Person = { ...p, name: 'Second', updatedAt: at(), version: 2 }
      const outcomes = await Promise.all([people.update(first, 1), people.update(second, 1)])
      assert.deepEqual(outcomes.slice().sort(), [false, true], 'exactly one of them')
      assert.deepEqual(await people.findById(p.id), outcomes[0] ? first : second)
      assert.equal(await people.delete(p.id, 1), false, 'a stale version deletes nothing')
      assert.equal((await people.findById(p.id))?.version, 2)
      assert.equal(await people.delete(p.id, 2), true)
      assert.equal(await people.findById(p.id), undefined)
    }
  },
  {
    name: 'delete takes the person, their friendships and their messages',
    async run (ports) {
      const [a, b, c] = await insertPeople(ports, 3)
      await ports.friendships.add(a!.id, b!.id, at())
      await ports.friendships.add(b!.id, c!.id, at())
      const toA = message(a!.id)
      const toB = message(b!.id)
      await ports.messages.insert(toA)
      await ports.messages.insert(toB)
      assert.equal(await ports.people.delete(a!.id), true)
      assert.equal(await ports.people.findById(a!.id), undefined)
      assert.deepEqual(await ports.friendships.listFriends(b!.id, 10), [{ id: c!.id, name: c!.name }])
      assert.deepEqual(await ports.friendships.listFriends(a!.id, 10), [])
      assert.equal(await ports.messages.findById(toA.id), undefined)
      assert.deepEqual(await ports.messages.findById(toB.id), toB)
      assert.equal(await ports.people.delete(a!.id), false)
    }
  },
  {
    name: 'friendship is mutual and adding it twice changes nothing',
    async run (ports) {
      const [a, b] = await insertPeople(ports, 2)
      await ports.friendships.add(a!.id, b!.id, at())
      await ports.friendships.add(b!.id, a!.id, at())
      assert.deepEqual(await ports.friendships.listFriends(a!.id, 10), [{ id: b!.id, name: b!.name }])
      assert.deepEqual(await ports.friendships.listFriends(b!.id, 10), [{ id: a!.id, name: a!.name }])
    }
  },
  {
    name: 'removing a friendship removes both directions, and is idempotent',
    async run (ports) {
      const [a, b] = await insertPeople(ports, 2)
      await ports.friendships.add(a!.id, b!.id, at())
      await ports.friendships.remove(b!.id, a!.id)
      await ports.friendships.remove(b!.id, a!.id)
      assert.deepEqual(await ports.friendships.listFriends(a!.id, 10), [])
      assert.deepEqual(await ports.friendships.listFriends(b!.id, 10), [])
    }
  },
  {
    name: 'befriending someone who does not exist fails and writes nothing',
    async run (ports) {
      const [a] = await insertPeople(ports, 1)
      await rejectsWithCode(ports.friendships.add(a!.id, ids.next(), at()), 'PERSON_NOT_FOUND')
      await rejectsWithCode(ports.friendships.add(ids.next(), a!.id, at()), 'PERSON_NOT_FOUND')
      assert.deepEqual(await ports.friendships.listFriends(a!.id, 10), [])
    }
  },
  {
    name: 'friends come in id order, limited per person, for one or many people',
    async run (ports) {
      const [hub, other, ...rest] = await insertPeople(ports, 6)
      for (const p of rest) await ports.friendships.add(hub!.id, p.id, at())
      const expected = rest.map(({ id, name }) => ({ id, name })).sort((x, y) => (x.id < y.id ? -1 : 1))
      assert.deepEqual(await ports.friendships.listFriends(hub!.id, 3), expected.slice(0, 3))
      const many = await ports.friendships.listFriendsOfMany([hub!.id, other!.id, rest[0]!.id], 2)
      assert.deepEqual(many.get(hub!.id), expected.slice(0, 2))
      assert.deepEqual(many.get(other!.id) ?? [], [])
      assert.deepEqual(many.get(rest[0]!.id), [{ id: hub!.id, name: hub!.name }])
    }
  },
  {
    name: 'friends page by position, and a page resumes after a friend who is gone since',
    async run (ports) {
      const [hub, other, ...rest] = await insertPeople(ports, 7)
      for (const p of rest) await ports.friendships.add(hub!.id, p.id, at())
      const expected = rest.map(({ id, name }) => ({ id, name })).sort((x, y) => (x.id < y.id ? -1 : 1))
      const first = await ports.friendships.pageFriends(hub!.id, { limit: 2 })
      assert.deepEqual(first.map((entry) => entry.friend), expected.slice(0, 2))
      assert.ok(first[0]!.position < first[1]!.position, 'positions grow along the list')
      const last = first[1]!
      assert.deepEqual((await ports.friendships.pageFriends(hub!.id, { limit: 10, after: last.position })).map((entry) => entry.friend), expected.slice(2))
      await ports.people.delete(last.friend.id)
      assert.deepEqual((await ports.friendships.pageFriends(hub!.id, { limit: 10, after: last.position })).map((entry) => entry.friend), expected.slice(2),
        'the same page after the friend the cursor names is deleted')
      assert.deepEqual(await ports.friendships.pageFriends(hub!.id, { limit: 10, after: Number.MAX_SAFE_INTEGER }), [], 'past every position: nothing')
      const many = await ports.friendships.pageFriendsOfMany([hub!.id, other!.id], 3)
      assert.deepEqual(many.get(hub!.id), await ports.friendships.pageFriends(hub!.id, { limit: 3 }), 'a batch page is the single page')
      assert.deepEqual(many.get(other!.id) ?? [], [])
    }
  },
  {
    name: 'batch reads of nobody and of people without rows answer empty',
    async run (ports) {
      const [a] = await insertPeople(ports, 1)
      assert.deepEqual(await ports.people.findByIds([]), [])
      assert.equal((await ports.friendships.listFriendsOfMany([], 10)).size, 0)
      assert.equal((await ports.friendships.pageFriendsOfMany([], 10)).size, 0)
      assert.equal((await ports.messages.listForMany([], 10)).size, 0)
      assert.deepEqual((await ports.friendships.listFriendsOfMany([a!.id], 10)).get(a!.id) ?? [], [])
      assert.deepEqual((await ports.messages.listForMany([a!.id], 10)).get(a!.id) ?? [], [])
    }
  },
  {
    name: 'a message reads back, and cannot be sent to nobody',
    async run (ports) {
      const [a] = await insertPeople(ports, 1)
      const m = message(a!.id, { text: 'Grüße 👋\nline two' })
      await ports.messages.insert(m)
      assert.deepEqual(await ports.messages.findById(m.id), m)
      assert.equal(await ports.messages.findById(ids.next()), undefined)
      const orphan = message(ids.next())
      await rejectsWithCode(ports.messages.insert(orphan), 'PERSON_NOT_FOUND')
      assert.equal(await ports.messages.findById(orphan.id), undefined)
    }
  },
  {
    name: 'an inbox is newest first and pages by (sentAt, id)',
    async run (ports) {
      const [a, b] = await insertPeople(ports, 2)
      const first = message(a!.id)
      const sameTime = at()
      const sent = [first, message(a!.id, { sentAt: sameTime }), message(a!.id, { sentAt: sameTime }), message(a!.id, { sentAt: new Date(sameTime.getTime() + 1) })]
      for (const m of sent) await ports.messages.insert(m)
      await ports.messages.insert(message(b!.id))
      const newestFirst = [sent[3]!, sent[2]!, sent[1]!, sent[0]!]
      assert.deepEqual(await ports.messages.listForPerson(a!.id, { limit: 2 }), newestFirst.slice(0, 2))
      const last = newestFirst[1]!
      assert.deepEqual(await ports.messages.listForPerson(a!.id, { limit: 5, before: { sentAt: last.sentAt, id: last.id } }), newestFirst.slice(2))
      const many = await ports.messages.listForMany([a!.id, b!.id, ids.next()], 3)
      assert.deepEqual(many.get(a!.id), newestFirst.slice(0, 3))
      assert.equal(many.get(b!.id)?.length, 1)
    }
  },
  {
    name: 'an account reads back by id and by its username in any case; a taken username, in any case, is refused',
    async run ({ accounts }) {
      const ada = account({ username: 'Ada.Lovelace@example', role: 'admin' })
      await accounts.insert(ada)
      assert.deepEqual(await accounts.findById(ada.id), ada)
      assert.deepEqual(await accounts.findByUsername('Ada.Lovelace@example'), ada)
      assert.deepEqual(await accounts.findByUsername('ada.lovelace@example'), ada, 'usernames are found without regard to case')
      await rejectsWithCode(accounts.insert(account({ username: 'ADA.LOVELACE@EXAMPLE' })), 'USERNAME_TAKEN')
      assert.equal(await accounts.findById(ids.next()), undefined)
      await rejectsWithCode(accounts.insert(account({ username: ada.username })), 'USERNAME_TAKEN')
    }
  },
  {
    name: 'an API key reads back by id and lookup id, with its scopes, limit and revocation',
    async run ({ accounts, apiKeys }) {
      const owner = account()
      await accounts.insert(owner)
      const key = apiKey(owner.id, { scopes: ['people:read', 'people:write', 'messages:send'], rateLimit: 50 })
      await apiKeys.insert(key)
      assert.deepEqual(await apiKeys.findById(key.id), key)
      assert.deepEqual(await apiKeys.findByLookupId(key.lookupId), key)
      assert.equal(await apiKeys.findByLookupId('nonexistent'), undefined)
      const when = at()
      assert.equal(await apiKeys.revoke(key.id, when), true)
      assert.equal(await apiKeys.revoke(key.id, at()), false, 'revoking twice changes nothing')
      assert.equal(await apiKeys.revoke(ids.next(), at()), false)
      assert.deepEqual(await apiKeys.findByLookupId(key.lookupId), { ...key, revokedAt: when })
    }
  },
  {
    name: 'active keys list oldest first, per owner or for everyone, without revoked ones',
    async run ({ accounts, apiKeys }) {
      const [alice, bob] = [account(), account()]
      for (const a of [alice!, bob!]) await accounts.insert(a)
      const keys = [apiKey(alice!.id), apiKey(bob!.id), apiKey(alice!.id), apiKey(alice!.id)]
      for (const k of keys) await apiKeys.insert(k)
      await apiKeys.revoke(keys[2]!.id, at())
      assert.deepEqual((await apiKeys.listActive({ ownerId: alice!.id, limit: 10 })).map((k) => k.id), [keys[0]!.id, keys[3]!.id])
      assert.deepEqual((await apiKeys.listActive({ limit: 10 })).map((k) => k.id), [keys[0]!.id, keys[1]!.id, keys[3]!.id])
      assert.deepEqual((await apiKeys.listActive({ limit: 2 })).map((k) => k.id), [keys[0]!.id, keys[1]!.id])
    }
  },
  {
    name: 'active keys list after a position: creation time, then id, whether or not that key is still active',
    async run ({ accounts, apiKeys }) {
      const owner = account()
      await accounts.insert(owner)
      const first = apiKey(owner.id)
      // Three made in the same millisecond, ordered by id, not by insertion.
      const same = at()
      const [x, y, z] = [ids.next(), ids.next(), ids.next()].sort()
      const keys = [first, apiKey(owner.id, { id: z!, createdAt: same }), apiKey(owner.id, { id: x!, createdAt: same }), apiKey(owner.id, { id: y!, createdAt: same }), apiKey(owner.id)]
      for (const k of keys) await apiKeys.insert(k)
      const order = [keys[0]!, keys[2]!, keys[3]!, keys[1]!, keys[4]!].map((k) => k.id)
      const after = (k: ApiKey) => ({ at: k.createdAt, id: k.id })
      assert.deepEqual((await apiKeys.listActive({ limit: 10, after: after(keys[0]!) })).map((k) => k.id), order.slice(1))
      assert.deepEqual((await apiKeys.listActive({ limit: 10, after: after(keys[2]!) })).map((k) => k.id), order.slice(2), 'after x: y and z of the same millisecond')
      assert.deepEqual((await apiKeys.listActive({ ownerId: owner.id, limit: 1, after: after(keys[3]!) })).map((k) => k.id), [keys[1]!.id])
      await apiKeys.revoke(keys[3]!.id, at())
      assert.deepEqual((await apiKeys.listActive({ limit: 10, after: after(keys[3]!) })).map((k) => k.id), order.slice(3), 'after a key revoked since')
      assert.deepEqual((await apiKeys.listActive({ limit: 10, after: after(keys[4]!) })), [])
    }
  },
  {
    name: 'usage adds up per key and day, oldest day first',
    async run ({ accounts, apiKeys, apiKeyUsage }) {
      const owner = account()
      await accounts.insert(owner)
      const [a, b] = [apiKey(owner.id), apiKey(owner.id)]
      for (const k of [a!, b!]) await apiKeys.insert(k)
      await apiKeyUsage.add([])
      await apiKeyUsage.add([{ keyId: a!.id, day: '2026-11-22', requests: 3 }, { keyId: b!.id, day: '2026-11-22', requests: 1 }])
      await apiKeyUsage.add([{ keyId: a!.id, day: '2026-11-21', requests: 2 }, { keyId: a!.id, day: '2026-11-22', requests: 4 }])
      assert.deepEqual(await apiKeyUsage.byDay(a!.id), [{ day: '2026-11-21', requests: 2 }, { day: '2026-11-22', requests: 7 }])
      assert.deepEqual(await apiKeyUsage.byDay(b!.id), [{ day: '2026-11-22', requests: 1 }])
      assert.deepEqual(await apiKeyUsage.byDay(ids.next()), [])
    }
  },
  {
    name: 'accounts list by username in byte order, a page after a username at a time',
    async run ({ accounts }) {
      const names = ['bob', 'Zed', 'alice', 'Bob.2', '_x']
      for (const username of names) await accounts.insert(account({ username }))
      const all = await accounts.list({ limit: 10 })
      assert.deepEqual(all.map((a) => a.username), ['Bob.2', 'Zed', '_x', 'alice', 'bob'])
      assert.deepEqual((await accounts.list({ limit: 2 })).map((a) => a.username), ['Bob.2', 'Zed'])
      assert.deepEqual((await accounts.list({ afterUsername: 'Zed', limit: 2 })).map((a) => a.username), ['_x', 'alice'])
      assert.deepEqual(await accounts.list({ afterUsername: 'bob', limit: 2 }), [])
      assert.deepEqual(all[0], await accounts.findByUsername('Bob.2'), 'listed accounts are whole')
    }
  },
  {
    name: 'an exclusive change stores role, disabled, password, token version and the deletion mark, or nothing when it throws',
    async run ({ accounts }) {
      const [ada, bob, cy] = [account({ role: 'admin' }), account({ role: 'admin' }), account({ role: 'viewer' })]
      for (const a of [ada!, bob!, cy!]) await accounts.insert(a)
      const changed = { ...bob!, role: 'editor' as const, disabled: true, passwordHash: '$scrypt$ln=10,r=8,p=1$c2FsdA$bmV3', tokenVersion: 3, deleting: true }
      const counted = await accounts.changeExclusively(async (tx) => {
        assert.deepEqual(await tx.findById(bob!.id), bob)
        const before = await tx.countEnabledAdmins()
        await tx.update(changed)
        assert.deepEqual(await tx.findById(bob!.id), changed, 'the transaction reads its own writes')
        return [before, await tx.countEnabledAdmins()]
      })
      assert.deepEqual(counted, [2, 1])
      assert.deepEqual(await accounts.findById(bob!.id), changed)
      await assert.rejects(accounts.changeExclusively(async (tx) => {
        await tx.update({ ...ada!, disabled: true })
        throw new Error('changed my mind')
      }), /changed my mind/)
      assert.deepEqual(await accounts.findById(ada!.id), ada, 'nothing of a failed change stays')
      assert.equal(await accounts.changeExclusively((tx) => tx.countEnabledAdmins()), 1)
    }
  },
  {
    name: 'exclusive changes run one at a time, so a rule over several accounts holds',
    async run ({ accounts }) {
      const admins = [account({ role: 'admin' }), account({ role: 'admin' })]
      for (const a of admins) await accounts.insert(a)
      // Each demotes its admin only if another would remain: run together
      // without exclusion, both would see two admins and leave none.
      const demote = (target: Account) => accounts.changeExclusively(async (tx) => {
        const admins = await tx.countEnabledAdmins()
        await pause(30)
        if (admins <= 1) return false
        await tx.update({ ...target, role: 'viewer' })
        return true
      })
      const outcomes = await Promise.all(admins.map(demote))
      assert.deepEqual(outcomes.sort(), [false, true])
      assert.equal((await accounts.list({ limit: 10 })).filter((a) => a.role === 'admin').length, 1)
    }
  },
  {
    name: 'deleting an account deletes its keys and their usage; messages it sent stay',
    async run ({ accounts, apiKeys, apiKeyUsage, people, messages }) {
      const [gone, stays] = [account(), account()]
      for (const a of [gone!, stays!]) await accounts.insert(a)
      const [goneKey, staysKey] = [apiKey(gone!.id), apiKey(stays!.id)]
      for (const k of [goneKey!, staysKey!]) await apiKeys.insert(k)
      await apiKeyUsage.add([{ keyId: goneKey!.id, day: '2026-11-22', requests: 3 }, { keyId: staysKey!.id, day: '2026-11-22', requests: 1 }])
      const [recipient] = await insertPeople({ people } as RepositoryPorts, 1)
      const sent = message(recipient!.id, { senderId: gone!.id })
      await messages.insert(sent)
      assert.equal(await accounts.changeExclusively((tx) => tx.delete(gone!.id)), true, 'a few keys go in the one transaction')
      assert.equal(await accounts.findById(gone!.id), undefined)
      assert.equal(await apiKeys.findById(goneKey!.id), undefined)
      assert.equal(await apiKeys.findByLookupId(goneKey!.lookupId), undefined)
      assert.deepEqual(await apiKeyUsage.byDay(goneKey!.id), [])
      assert.deepEqual(await apiKeys.findById(staysKey!.id), staysKey)
      assert.deepEqual(await apiKeyUsage.byDay(staysKey!.id), [{ day: '2026-11-22', requests: 1 }])
      assert.deepEqual(await messages.findById(sent.id), sent)
    }
  },
  {
    name: 'shedding an account\'s keys deletes them and their usage, revoked ones too, and nothing else',
    async run ({ accounts, apiKeys, apiKeyUsage }) {
      const [shedding, stays] = [account(), account()]
      for (const a of [shedding!, stays!]) await accounts.insert(a)
      const keys = [apiKey(shedding!.id), apiKey(shedding!.id), apiKey(shedding!.id)]
      const staysKey = apiKey(stays!.id)
      for (const k of [...keys, staysKey]) await apiKeys.insert(k)
      await apiKeys.revoke(keys[1]!.id, at())
      await apiKeyUsage.add([...keys, staysKey].map((k) => ({ keyId: k.id, day: '2026-11-22', requests: 1 })))
      let asked = 0
      await accounts.shedKeys(shedding!.id, async () => { asked++ })
      for (const k of keys) {
        assert.equal(await apiKeys.findById(k.id), undefined)
        assert.deepEqual(await apiKeyUsage.byDay(k.id), [])
      }
      assert.deepEqual(await accounts.findById(shedding!.id), shedding, 'the account stays')
      assert.deepEqual(await apiKeys.findById(staysKey.id), staysKey)
      assert.deepEqual(await apiKeyUsage.byDay(staysKey.id), [{ day: '2026-11-22', requests: 1 }])
      assert.equal(asked, 0, 'three keys are less than a step: nobody is asked to wait')
      assert.equal(await accounts.changeExclusively((tx) => tx.delete(shedding!.id)), true)
      assert.equal(await accounts.findById(shedding!.id), undefined)
    }
  },
  {
    name: 'usage counted for a key deleted since is dropped; the rest of the batch is stored',
    async run ({ accounts, apiKeys, apiKeyUsage }) {
      const [gone, stays] = [account(), account()]
      for (const a of [gone!, stays!]) await accounts.insert(a)
      const [goneKey, staysKey] = [apiKey(gone!.id), apiKey(stays!.id)]
      for (const k of [goneKey!, staysKey!]) await apiKeys.insert(k)
      await accounts.changeExclusively((tx) => tx.delete(gone!.id))
      // An instance counted requests of the key before its account went.
      await apiKeyUsage.add([{ keyId: goneKey!.id, day: '2026-11-22', requests: 3 }, { keyId: staysKey!.id, day: '2026-11-22', requests: 2 }])
      await apiKeyUsage.add([{ keyId: goneKey!.id, day: '2026-11-23', requests: 1 }])
      assert.deepEqual(await apiKeyUsage.byDay(staysKey!.id), [{ day: '2026-11-22', requests: 2 }])
      assert.deepEqual(await apiKeyUsage.byDay(goneKey!.id), [])
    }
  },
  {
    name: 'projections are the JSON of what the repositories read, byte for byte, friends in list order',
    async run ({ people, friendships, projections }) {
      const names = ['Zoë "Z" O\'Brien 😀', 'tab\tnewline\n', 'back\\slash \u2028', 'control \u0001\u001f\u007f']
      const stored = [
        ...await insertPeople({ people } as RepositoryPorts, 4),
        person({ name: names[0], age: null, email: null, address: null }),
        person({ name: names[1], address: { street: null, city: null, country: null } }),
        person({ name: names[2], address: { street: null, city: 'Paris', country: null } }),
        person({ name: names[3] })
      ]
      for (const p of stored.slice(4)) await people.insert(p)
      for (const [i, p] of stored.entries()) {
        for (const friend of stored.slice(i + 1, i + 5)) await friendships.add(p.id, friend.id, at())
      }
      const selection: PersonSelection = [
        { kind: 'constant', key: '__typename', value: 'Person' },
        { kind: 'field', key: 'who', field: 'name' },
        { kind: 'field', key: 'id', field: 'id' },
        { kind: 'field', key: 'age', field: 'age' },
        { kind: 'field', key: 'email', field: 'email' },
        { kind: 'address', key: 'address', selection: [{ kind: 'field', key: 'city', field: 'city' }, { kind: 'constant', key: 't', value: 'Address' }, { kind: 'field', key: 'street', field: 'street' }] },
        {
          kind: 'friends',
          key: 'friends',
          limit: 3,
          selection: [
            { kind: 'field', key: 'name', field: 'name' },
            { kind: 'friends', key: 'none', limit: 0, selection: [{ kind: 'field', key: 'id', field: 'id' }] },
            { kind: 'friends', key: 'more', limit: 2, selection: [{ kind: 'field', key: 'country', field: 'name' }, { kind: 'address', key: 'a', selection: [{ kind: 'field', key: 'country', field: 'country' }] }] }
          ]
        }
      ]
      const reference = referenceProjections({ people, friendships })
      for (const p of stored) assert.equal(await projections.findJson(p.id, selection), await reference.findJson(p.id, selection))
      assert.equal(await projections.findJson(ids.next(), selection), undefined)
      const [, second] = stored
      for (const query of [{ limit: 3 }, { limit: 100 }, { limit: 3, afterId: second!.id }, { limit: 3, afterId: ids.next() }]) {
        assert.equal(await projections.listJson(query, selection), await reference.listJson(query, selection))
      }
      // What the reference gives, spelled out for one person.
      const [first] = stored
      const shown = JSON.parse(await projections.findJson(first!.id, selection) ?? 'null') as { friends: Array<{ name: string }> }
      assert.deepEqual(shown.friends.map((friend) => friend.name), ['Person 1', 'Person 2', 'Person 3'])
    }
  },
  {
    name: 'webhooks: stored, listed in creation order, changed field by field, counted, removed',
    async run ({ webhooks }) {
      const webhook = (fields: Partial<StoredWebhook> = {}): StoredWebhook =>
        ({ id: ids.next(), url: 'https://hooks.example.org/in', types: [], description: null, disabled: false, createdAt: at(), sealedSecret: 'v1.c2VhbGVk', ...fields })
      const first = webhook({ types: ['person.created', 'message.sent'], description: 'CRM' })
      const second = webhook()
      await webhooks.insert(first)
      await webhooks.insert(second)
      assert.deepEqual(await webhooks.findById(first.id), first)
      assert.equal(await webhooks.findById(ids.next()), undefined)
      assert.equal(await webhooks.count(), 2)
      assert.deepEqual((await webhooks.list({ limit: 10 })).map((w) => w.id), [first.id, second.id])
      assert.deepEqual((await webhooks.list({ limit: 10, afterId: first.id })).map((w) => w.id), [second.id])
      assert.deepEqual(await webhooks.update(first.id, { disabled: true, description: null }), { ...first, disabled: true, description: null })
      assert.deepEqual(await webhooks.update(first.id, { url: 'https://other.example.org/', types: ['person.deleted'] }), { ...first, disabled: true, description: null, url: 'https://other.example.org/', types: ['person.deleted'] })
      assert.equal(await webhooks.update(ids.next(), { disabled: true }), undefined)
      assert.deepEqual(await webhooks.listDeliveries({ webhookId: first.id, limit: 10 }), [])
      assert.equal(await webhooks.retryDelivery(first.id, ids.next(), at()), false, 'no such delivery')
      assert.equal(await webhooks.remove(first.id), true)
      assert.equal(await webhooks.remove(first.id), false)
      assert.equal(await webhooks.count(), 1)
      assert.equal(await webhooks.findById(first.id), undefined)
    }
  },
  ...idempotencyContract
]
