import t from 'tap'
import { accountCaller, createAccessUseCases, createUseCases, uuidv7Generator, type Clock } from '@people-service/domain'
import { createInMemoryPorts, fastPasswordHasher, inMemoryMessageEvents, SETUP_ACTOR } from '@people-service/domain/testing'

const fixedClock = (iso: string): Clock & { set(iso: string): void } => {
  let now = new Date(iso)
  return { now: () => new Date(now), set: (next) => { now = new Date(next) } }
}

const setup = () => {
  const clock = fixedClock('2026-11-21T10:00:00.000Z')
  const events = inMemoryMessageEvents()
  const ports = createInMemoryPorts({ clock, events })
  return { clock, events, useCases: createUseCases(ports) }
}

t.test('createPerson fills the defaults and stamps both times', async (t) => {
  const { useCases } = setup()
  const ada = await useCases.createPerson(SETUP_ACTOR, { name: 'Ada' })
  t.match(ada, { name: 'Ada', age: null, email: null, address: null })
  t.same(ada.createdAt, new Date('2026-11-21T10:00:00.000Z'))
  t.same(ada.updatedAt, ada.createdAt)
  t.same(await useCases.getPerson(ada.id), ada)
})

t.test('createPerson rejects every broken invariant, naming the field', async (t) => {
  const { useCases } = setup()
  const cases: Array<[Record<string, unknown>, string]> = [
    [{}, 'name'],
    [{ name: '' }, 'name'],
    [{ name: 'x'.repeat(201) }, 'name'],
    [{ name: 'A', age: -1 }, 'age'],
    [{ name: 'A', age: 151 }, 'age'],
    [{ name: 'A', age: 1.5 }, 'age'],
    [{ name: 'A', email: 'not-an-address' }, 'email'],
    [{ name: 'A', email: `${'a'.repeat(250)}@x.io` }, 'email'],
    [{ name: 'A', address: { city: 'c'.repeat(201) } }, 'address.city'],
    // A lone surrogate is half a character: no database stores it as given.
    [{ name: 'Ada\ud83d' }, 'name'],
    [{ name: 'A', email: 'ada\udc00@example.org' }, 'email'],
    [{ name: 'A', address: { street: '\ud83d' } }, 'address.street']
  ]
  for (const [input, field] of cases) {
    await t.rejects(useCases.createPerson(SETUP_ACTOR, input as never), { code: 'VALIDATION_FAILED', field }, JSON.stringify(input).slice(0, 60))
  }
  t.same((await useCases.listPeople()).items, [], 'nothing was stored')
  t.ok(await useCases.createPerson(SETUP_ACTOR, { name: '😀'.repeat(200) }), '200 characters, not 200 code units')
  // 254 characters, 255 UTF-16 units: '𠮷' lies outside the BMP.
  const email = `𠮷@${'b'.repeat(248)}.org`
  t.equal([...email].length, 254)
  t.ok(await useCases.createPerson(SETUP_ACTOR, { name: 'A', email }), 'an e-mail address of 254 characters, not 254 code units')
})

t.test('updatePerson keeps what is left out, clears what is null, merges the address', async (t) => {
  const { useCases, clock } = setup()
  const ada = await useCases.createPerson(SETUP_ACTOR, { name: 'Ada', age: 36, email: 'ada@example.org', address: { street: '12 St James', city: 'London', country: 'UK' } })
  clock.set('2026-11-21T11:00:00.000Z')
  const moved = await useCases.updatePerson(SETUP_ACTOR, ada.id, { address: { city: 'Paris', country: null } })
  t.same(moved.address, { street: '12 St James', city: 'Paris', country: null })
  t.equal(moved.age, 36)
  t.equal(moved.email, 'ada@example.org')
  t.same(moved.createdAt, ada.createdAt)
  t.same(moved.updatedAt, new Date('2026-11-21T11:00:00.000Z'))
  const cleared = await useCases.updatePerson(SETUP_ACTOR, ada.id, { email: null, address: null })
  t.equal(cleared.email, null)
  t.equal(cleared.address, null)
  t.same(await useCases.getPerson(ada.id), cleared)
  await t.rejects(useCases.updatePerson(SETUP_ACTOR, ada.id, { name: null as never }), { code: 'VALIDATION_FAILED', field: 'name' })
  await t.rejects(useCases.updatePerson(SETUP_ACTOR, ada.id, { age: 200 }), { code: 'VALIDATION_FAILED', field: 'age' })
  t.same(await useCases.getPerson(ada.id), cleared, 'a rejected update changes nothing')
})

t.test('an invalid patch is VALIDATION_FAILED before anyone is looked up, as an invalid message is', async (t) => {
  const { useCases } = setup()
  for (const id of [uuidv7Generator().next(), 'not-an-id']) {
    await t.rejects(useCases.updatePerson(SETUP_ACTOR, id, { age: 151 }), { code: 'VALIDATION_FAILED', field: 'age' })
    await t.rejects(useCases.updatePerson(SETUP_ACTOR, id, { name: null as never }), { code: 'VALIDATION_FAILED', field: 'name' })
    await t.rejects(useCases.updatePerson(SETUP_ACTOR, id, { address: { city: 'c'.repeat(201) } }), { code: 'VALIDATION_FAILED', field: 'address.city' })
    await t.rejects(useCases.sendMessage({ kind: 'account', id: 's' }, { personId: id, text: '' }), { code: 'VALIDATION_FAILED', field: 'text' })
  }
})

t.test('unknown and malformed ids are PERSON_NOT_FOUND', async (t) => {
  const { useCases } = setup()
  const unknown = uuidv7Generator().next()
  for (const id of [unknown, 'not-an-id', '']) {
    await t.rejects(useCases.getPerson(id), { code: 'PERSON_NOT_FOUND' })
    await t.rejects(useCases.updatePerson(SETUP_ACTOR, id, { name: 'x' }), { code: 'PERSON_NOT_FOUND' })
    await t.rejects(useCases.deletePerson(SETUP_ACTOR, id), { code: 'PERSON_NOT_FOUND' })
    await t.rejects(useCases.listFriends(id), { code: 'PERSON_NOT_FOUND' })
    await t.rejects(useCases.listInbox(id), { code: 'PERSON_NOT_FOUND' })
    await t.rejects(useCases.sendMessage({ kind: 'account', id: 's' }, { personId: id, text: 'hi' }), { code: 'PERSON_NOT_FOUND' })
    await t.rejects(useCases.getMessage(id), { code: 'MESSAGE_NOT_FOUND' })
  }
})

t.test('friendship: mutual, idempotent, never with oneself', async (t) => {
  const { useCases } = setup()
  const ada = await useCases.createPerson(SETUP_ACTOR, { name: 'Ada' })
  const bob = await useCases.createPerson(SETUP_ACTOR, { name: 'Bob' })
  await useCases.befriend(SETUP_ACTOR, ada.id, bob.id)
  await useCases.befriend(SETUP_ACTOR, ada.id, bob.id)
  t.same((await useCases.listFriends(bob.id)).items, [{ id: ada.id, name: 'Ada' }])
  await t.rejects(useCases.befriend(SETUP_ACTOR, ada.id, ada.id), { code: 'SELF_FRIENDSHIP' })
  await t.rejects(useCases.befriend(SETUP_ACTOR, ada.id, uuidv7Generator().next()), { code: 'PERSON_NOT_FOUND' })
  await useCases.unfriend(SETUP_ACTOR, bob.id, ada.id)
  await useCases.unfriend(SETUP_ACTOR, bob.id, ada.id)
  t.same((await useCases.listFriends(ada.id)).items, [])
  await t.rejects(useCases.listFriends(ada.id, { limit: 101 }), { code: 'VALIDATION_FAILED', field: 'limit' })
})

t.test('befriending or unfriending oneself is SELF_FRIENDSHIP whoever the id names, well formed or not', async (t) => {
  const { useCases } = setup()
  const ada = await useCases.createPerson(SETUP_ACTOR, { name: 'Ada' })
  for (const id of [ada.id, uuidv7Generator().next(), 'nobody', ada.id.toUpperCase()]) {
    await t.rejects(useCases.befriend(SETUP_ACTOR, id, id), { code: 'SELF_FRIENDSHIP' }, `befriend ${id}`)
    await t.rejects(useCases.unfriend(SETUP_ACTOR, id, id), { code: 'SELF_FRIENDSHIP' }, `unfriend ${id}`)
  }
})

t.test('deletePerson takes friendships and messages along', async (t) => {
  const { useCases } = setup()
  const ada = await useCases.createPerson(SETUP_ACTOR, { name: 'Ada' })
  const bob = await useCases.createPerson(SETUP_ACTOR, { name: 'Bob' })
  await useCases.befriend(SETUP_ACTOR, ada.id, bob.id)
  const message = await useCases.sendMessage({ kind: 'account', id: 'x' }, { personId: ada.id, text: 'hi' })
  await useCases.deletePerson(SETUP_ACTOR, ada.id)
  t.same((await useCases.listFriends(bob.id)).items, [])
  await t.rejects(useCases.getMessage(message.id), { code: 'MESSAGE_NOT_FOUND' })
  await t.rejects(useCases.deletePerson(SETUP_ACTOR, ada.id), { code: 'PERSON_NOT_FOUND' })
})

t.test('listPeople pages by cursor and filters by name', async (t) => {
  const { useCases } = setup()
  const names = ['Ada', 'Bob', 'Cy', 'Dee', 'Eve']
  const people = []
  for (const name of names) people.push(await useCases.createPerson(SETUP_ACTOR, { name }))
  const first = await useCases.listPeople({ limit: 2 })
  t.same(first.items.map((p) => p.name), ['Ada', 'Bob'])
  t.type(first.next, 'string')
  const second = await useCases.listPeople({ limit: 2, cursor: first.next! })
  t.same(second.items.map((p) => p.name), ['Cy', 'Dee'])
  const last = await useCases.listPeople({ limit: 2, cursor: second.next! })
  t.same(last.items.map((p) => p.name), ['Eve'])
  t.equal(last.next, undefined)
  t.same((await useCases.listPeople({ name: 'E' })).items.map((p) => p.name), ['Dee', 'Eve'])
  for (const cursor of ['garbage', Buffer.from('[1]').toString('base64url'), Buffer.from('{}').toString('base64url')]) {
    await t.rejects(useCases.listPeople({ cursor }), { code: 'INVALID_CURSOR' })
  }
  await t.rejects(useCases.listPeople({ limit: 1001 }), { code: 'VALIDATION_FAILED' })
})

t.test('sendMessage validates, stores and publishes; the inbox is newest first', async (t) => {
  const { useCases, events, clock } = setup()
  const ada = await useCases.createPerson(SETUP_ACTOR, { name: 'Ada' })
  await t.rejects(useCases.sendMessage({ kind: 'account', id: 's' }, { personId: ada.id, text: '' }), { code: 'VALIDATION_FAILED', field: 'text' })
  await t.rejects(useCases.sendMessage({ kind: 'account', id: 's' }, { personId: ada.id, text: 'x'.repeat(10_001) }), { code: 'VALIDATION_FAILED', field: 'text' })
  await t.rejects(useCases.sendMessage({ kind: 'account', id: 's' }, { personId: ada.id, text: 'hi \ud83d' }), { code: 'VALIDATION_FAILED', field: 'text' })
  const sent = []
  for (let i = 0; i < 3; i++) {
    clock.set(`2026-11-21T10:0${i}:00.000Z`)
    sent.push(await useCases.sendMessage({ kind: 'account', id: 'caller-1' }, { personId: ada.id, text: `m${i}` }))
  }
  t.same(events.sent, sent, 'every sent message was published, in order')
  t.same(await useCases.getMessage(sent[0]!.id), sent[0])
  const page = await useCases.listInbox(ada.id, { limit: 2 })
  t.same(page.items.map((m) => m.text), ['m2', 'm1'])
  const rest = await useCases.listInbox(ada.id, { limit: 2, cursor: page.next! })
  t.same(rest.items.map((m) => m.text), ['m0'])
  t.equal(rest.next, undefined)
})

const cursorOf = (key: unknown): string => Buffer.from(JSON.stringify(key)).toString('base64url')

t.test('friends page by cursor: everyone once, each edge with its cursor, cursors only for their list', async (t) => {
  const { useCases } = setup()
  const hub = await useCases.createPerson(SETUP_ACTOR, { name: 'Hub' })
  const friends = []
  for (let i = 0; i < 7; i++) {
    friends.push(await useCases.createPerson(SETUP_ACTOR, { name: `Friend ${i}` }))
    await useCases.befriend(SETUP_ACTOR, hub.id, friends[i]!.id)
  }
  const seen = []
  let cursor: string | undefined
  const sizes = []
  do {
    const page = await useCases.listFriends(hub.id, { limit: 3, ...(cursor === undefined ? {} : { cursor }) })
    t.equal(page.cursors.length, page.items.length, 'a cursor per friend')
    if (page.next !== undefined) t.equal(page.next, page.cursors.at(-1), 'next is the last friend\'s cursor')
    seen.push(...page.items)
    sizes.push(page.items.length)
    cursor = page.next
  } while (cursor !== undefined)
  t.same(seen, friends.map(({ id, name }) => ({ id, name })), 'every friend once, in the order they were stored')
  t.same(sizes, [3, 3, 1])

  const first = await useCases.listFriends(hub.id, { limit: 3 })
  t.same((await useCases.listFriends(hub.id, { limit: 2, cursor: first.cursors[0]! })).items.map((f) => f.name), ['Friend 1', 'Friend 2'], 'any friend\'s cursor resumes after them')
  await useCases.deletePerson(SETUP_ACTOR, friends[2]!.id)
  t.same((await useCases.listFriends(hub.id, { limit: 2, cursor: first.next! })).items.map((f) => f.name), ['Friend 3', 'Friend 4'], 'and still does once they are deleted')
  for (const forged of [first.next!.slice(1), cursorOf([`friends:${friends[0]!.id}`, '1']), cursorOf([`friends:${hub.id}`, 'x']), cursorOf([`friends:${hub.id}`, '1e3']), cursorOf([hub.id])]) {
    await t.rejects(useCases.listFriends(hub.id, { cursor: forged }), { code: 'INVALID_CURSOR' }, 'another list\'s cursor, or one never issued')
  }

  const pages = await useCases.pageFriendsOfMany([hub.id, friends[0]!.id, 'not-an-id'], 3)
  t.same(pages.get(hub.id), await useCases.listFriends(hub.id, { limit: 3 }), 'the batch\'s first page is the single one, cursors included')
  t.same(pages.get(friends[0]!.id), await useCases.listFriends(friends[0]!.id, { limit: 3 }))
  t.same(pages.get('not-an-id'), { items: [], cursors: [] })
  await t.rejects(useCases.pageFriendsOfMany([hub.id], 101), { code: 'VALIDATION_FAILED', field: 'limit' })
})

t.test('inboxes page the same way one at a time and in a batch', async (t) => {
  const { useCases, clock } = setup()
  const ada = await useCases.createPerson(SETUP_ACTOR, { name: 'Ada' })
  const bob = await useCases.createPerson(SETUP_ACTOR, { name: 'Bob' })
  for (let i = 0; i < 5; i++) {
    clock.set(`2026-11-21T10:0${i}:00.000Z`)
    await useCases.sendMessage({ kind: 'account', id: 's' }, { personId: ada.id, text: `m${i}` })
  }
  const pages = await useCases.pageInboxOfMany([ada.id, bob.id], 2)
  const single = await useCases.listInbox(ada.id, { limit: 2 })
  t.same(pages.get(ada.id), single, 'the batch\'s first page is the single one, cursors included')
  t.same(single.items.map((m) => m.text), ['m4', 'm3'])
  t.same((await useCases.listInbox(ada.id, { limit: 2, cursor: single.cursors[0]! })).items.map((m) => m.text), ['m3', 'm2'])
  t.same(pages.get(bob.id), { items: [], cursors: [] })
  await t.rejects(useCases.listInbox(bob.id, { cursor: single.next! }), { code: 'INVALID_CURSOR' }, 'another inbox\'s cursor')
})

t.test('uuidv7 ids are well formed and strictly increasing', async (t) => {
  const ids = uuidv7Generator(() => 1_700_000_000_000)
  const made = Array.from({ length: 10_000 }, () => ids.next())
  t.ok(made.every((id, i) => i === 0 || id > made[i - 1]!), 'each id sorts after the one before')
  t.match(made.at(-1), /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
})

t.test('batch reads answer every asked id, in one call, and check their limits', async (t) => {
  const { useCases } = setup()
  const ada = await useCases.createPerson(SETUP_ACTOR, { name: 'Ada' })
  const bob = await useCases.createPerson(SETUP_ACTOR, { name: 'Bob' })
  const cy = await useCases.createPerson(SETUP_ACTOR, { name: 'Cy' })
  await useCases.befriend(SETUP_ACTOR, ada.id, bob.id)
  await useCases.befriend(SETUP_ACTOR, ada.id, cy.id)
  const unknown = uuidv7Generator().next()

  const people = await useCases.getPeopleByIds([ada.id, unknown, 'not-an-id', ada.id])
  t.same([...people.keys()], [ada.id], 'only those who exist, each once')
  t.same(people.get(ada.id), ada)

  const friends = await useCases.listFriendsOfMany([ada.id, bob.id, unknown, 'not-an-id'], 1)
  t.same(friends.get(ada.id), [{ id: bob.id, name: 'Bob' }], 'at most the limit, in id order')
  t.same(friends.get(bob.id), [{ id: ada.id, name: 'Ada' }])
  t.same(friends.get(unknown), [], 'unknown people have no friends')
  t.same(friends.get('not-an-id'), [])
  t.same((await useCases.listFriendsOfMany([ada.id], 0)).get(ada.id), [])
  await t.rejects(useCases.listFriendsOfMany([ada.id], 101), { code: 'VALIDATION_FAILED', field: 'limit' })

  const first = await useCases.sendMessage({ kind: 'account', id: 's' }, { personId: ada.id, text: 'one' })
  const second = await useCases.sendMessage({ kind: 'account', id: 's' }, { personId: ada.id, text: 'two' })
  const inboxes = await useCases.listInboxOfMany([ada.id, bob.id, unknown], 5)
  t.same(inboxes.get(ada.id)?.map((m) => m.id), [second.id, first.id], 'newest first')
  t.same(inboxes.get(bob.id), [])
  t.same(inboxes.get(unknown), [])
  await t.rejects(useCases.listInboxOfMany([ada.id], -1), { code: 'VALIDATION_FAILED', field: 'limit' })
})

/** A repository that refuses text holding U+0000 as PostgreSQL does. */
const refusingNul = <T extends object>(repository: T): T => {
  const guarded: Record<string, unknown> = {}
  for (const [name, method] of Object.entries(repository)) {
    guarded[name] = typeof method !== 'function'
      ? method
      : (...args: unknown[]) => {
          if (JSON.stringify(args).includes('\\u0000')) throw new Error(`${name} was given U+0000`)
          return (method as (...a: unknown[]) => unknown).apply(repository, args)
        }
  }
  return guarded as T
}

t.test('text holding U+0000 is refused or matches nothing, and never reaches a repository', async (t) => {
  const memory = createInMemoryPorts({ passwords: fastPasswordHasher() })
  const { people, friendships, messages, accounts, apiKeys } = memory
  const ports = {
    ...memory,
    people: refusingNul(people),
    friendships: refusingNul(friendships),
    messages: refusingNul(messages),
    accounts: refusingNul(accounts),
    apiKeys: refusingNul(apiKeys)
  }
  const useCases = createUseCases(ports)
  const access = createAccessUseCases(ports)
  const nul = 'a\u0000b'
  const ada = await useCases.createPerson(SETUP_ACTOR, { name: 'Ada' })

  for (const [input, field] of [
    [{ name: nul }, 'name'],
    [{ name: 'A', email: `${nul}@example.org` }, 'email'],
    [{ name: 'A', address: { city: nul } }, 'address.city']
  ] as const) {
    await t.rejects(useCases.createPerson(SETUP_ACTOR, input), { code: 'VALIDATION_FAILED', field }, field)
  }
  await t.rejects(useCases.updatePerson(SETUP_ACTOR, ada.id, { name: nul }), { code: 'VALIDATION_FAILED', field: 'name' })
  await t.rejects(useCases.sendMessage({ kind: 'account', id: 's' }, { personId: ada.id, text: nul }), { code: 'VALIDATION_FAILED', field: 'text' })

  t.same(await useCases.listPeople({ name: nul }), { items: [] })
  await t.rejects(useCases.listPeople({ cursor: Buffer.from(JSON.stringify([nul])).toString('base64url') }), { code: 'INVALID_CURSOR' })
  const byPersonId: Array<(id: string) => Promise<unknown>> = [useCases.getPerson, (id) => useCases.deletePerson(SETUP_ACTOR, id), useCases.listFriends, useCases.listInbox]
  for (const read of byPersonId) await t.rejects(read(nul), { code: 'PERSON_NOT_FOUND' })
  await t.rejects(useCases.getMessage(nul), { code: 'MESSAGE_NOT_FOUND' })

  const admin = accountCaller(await access.createAccount(SETUP_ACTOR, { username: 'root', password: 'correct horse battery', role: 'admin' }))
  await t.rejects(access.createApiKey(admin, { name: nul }), { code: 'VALIDATION_FAILED', field: 'name' })
  await t.rejects(access.createApiKey(admin, { name: 'key \ud83d' }), { code: 'VALIDATION_FAILED', field: 'name' }, 'a lone surrogate, as in every stored text')
  await t.rejects(access.logIn(`root${nul}`, 'correct horse battery'), { code: 'INVALID_CREDENTIALS' })
})

t.test('projectPerson and projectPeople answer as getPerson and listPeople, as JSON shaped by the selection', async (t) => {
  const { useCases } = setup()
  const ada = await useCases.createPerson(SETUP_ACTOR, { name: 'Ada', age: 36, address: { city: 'London' } })
  const bob = await useCases.createPerson(SETUP_ACTOR, { name: 'Bob' })
  await useCases.befriend(SETUP_ACTOR, ada.id, bob.id)
  const selection = [
    { kind: 'field', key: 'who', field: 'name' },
    { kind: 'address', key: 'address', selection: [{ kind: 'field', key: 'city', field: 'city' }] },
    { kind: 'friends', key: 'friends', limit: 10, selection: [{ kind: 'field', key: 'id', field: 'id' }] }
  ] as const
  t.equal(await useCases.projectPerson(ada.id, selection), `{"who":"Ada","address":{"city":"London"},"friends":[{"id":"${bob.id}"}]}`)
  t.equal(await useCases.projectPerson('no-such-id', selection), undefined, 'an id that is no id names nobody')
  t.equal(await useCases.projectPerson(uuidv7Generator().next(), selection), undefined, 'nor does one nobody has')
  t.equal(await useCases.projectPeople({ limit: 1 }, selection), `[${await useCases.projectPerson(ada.id, selection)}]`)
  const next = (await useCases.listPeople({ limit: 1 })).next
  t.equal(await useCases.projectPeople({ limit: 5, ...(next === undefined ? {} : { cursor: next }) }, [{ kind: 'field', key: 'name', field: 'name' }]), '[{"name":"Bob"}]')
  await t.rejects(useCases.projectPeople({ cursor: 'bm9wZQ' }, selection), { code: 'INVALID_CURSOR' })
  await t.rejects(useCases.projectPeople({ limit: 1001 }, selection), { code: 'VALIDATION_FAILED' })
  await t.rejects(useCases.projectPerson(ada.id, [{ kind: 'friends', key: 'f', limit: 101, selection: [] }]), { code: 'VALIDATION_FAILED' })
})

t.test('listPeopleJson answers the JSON of the page listPeople gives, with the same next cursor, whether or not the repository builds it', async (t) => {
  const clock = fixedClock('2026-11-21T10:00:00.000Z')
  const ports = createInMemoryPorts({ clock, events: inMemoryMessageEvents() })
  const { listJson: _built, ...withoutJson } = ports.people
  const variants = { built: createUseCases(ports), serialized: createUseCases({ ...ports, people: withoutJson }) }
  for (const name of ['Ada Lovelace', 'Grace "Amazing" Hopper', 'Alan Turing', 'Adele Goldberg']) await variants.built.createPerson(SETUP_ACTOR, { name })
  for (const [variant, useCases] of Object.entries(variants)) {
    for (const input of [{}, { limit: 2 }, { limit: 1, name: 'ad' }, { name: 'nobody' }, { name: 'a\u0000' }]) {
      let cursor: string | undefined
      do {
        const withCursor = cursor === undefined ? input : { ...input, cursor }
        const page = await useCases.listPeople(withCursor)
        const expected = page.next === undefined ? { json: JSON.stringify(page.items) } : { json: JSON.stringify(page.items), next: page.next }
        t.same(await useCases.listPeopleJson(withCursor), expected, `${variant} ${JSON.stringify(withCursor)}`)
        cursor = page.next
      } while (cursor !== undefined)
    }
  }
})
