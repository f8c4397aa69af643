import t from 'tap'
import {
  accountCaller, createAccessUseCases, DEFAULT_SCRYPT, localKeyRevocations, scryptPasswordHasher,
  type ApiKeyUsageRepository, type Caller, type Clock, type KeyRevocations, type UsageCount
} from '@people-service/domain'
import { createInMemoryPorts, fastPasswordHasher, SETUP_ACTOR } from '@people-service/domain/testing'

const fixedClock = (iso: string): Clock & { set(iso: string): void } => {
  let now = new Date(iso)
  return { now: () => new Date(now), set: (next) => { now = new Date(next) } }
}

const setup = (overrides: Parameters<typeof createInMemoryPorts>[0] = {}) => {
  const clock = fixedClock('2026-11-21T10:00:00.000Z')
  const ports = createInMemoryPorts({ clock, passwords: fastPasswordHasher(), ...overrides })
  const access = createAccessUseCases(ports, { maxRateLimitWithoutAdmin: 1000 })
  const callerWithRole = async (role: 'admin' | 'editor' | 'viewer', username = role): Promise<Caller> =>
    accountCaller(await access.createAccount(SETUP_ACTOR, { username, password: 'correct horse battery', role }))
  return { clock, ports, access, callerWithRole }
}

t.test('scrypt hashes are salted, self-describing and verify only their password', async (t) => {
  const hasher = scryptPasswordHasher({ N: 2 ** 10, r: 8, p: 1 })
  const one = await hasher.hash('correct horse battery')
  const two = await hasher.hash('correct horse battery')
  t.not(one, two, 'a fresh salt each time')
  t.match(one, /^\$scrypt\$ln=10,r=8,p=1\$[\w-]{22}\$[\w-]{86}$/)
  t.ok(await hasher.verify('correct horse battery', one))
  t.notOk(await hasher.verify('correct horse batterY', one))
  t.notOk(await hasher.verify('correct horse battery', 'not a hash'))
  t.notOk(await hasher.verify('correct horse battery', hasher.decoyHash), 'the decoy matches nothing')
  t.match(scryptPasswordHasher().decoyHash, /^\$scrypt\$ln=15,r=8,p=3\$/, 'the decoy costs what a real hash costs')
  t.same(DEFAULT_SCRYPT, { N: 32768, r: 8, p: 3 })
})

t.test('accounts: validated, unique by name, never returned with their hash', async (t) => {
  const { access } = setup()
  const ada = await access.createAccount(SETUP_ACTOR, { username: 'ada', password: 'correct horse battery', role: 'editor' })
  t.same(Object.keys(ada).sort(), ['createdAt', 'disabled', 'id', 'role', 'username'])
  await t.rejects(access.createAccount(SETUP_ACTOR, { username: 'ada', password: 'correct horse battery', role: 'viewer' }), { code: 'USERNAME_TAKEN' })
  const bad: Array<[Record<string, unknown>, string]> = [
    [{ username: '', password: 'correct horse battery', role: 'viewer' }, 'username'],
    [{ username: 'has space', password: 'correct horse battery', role: 'viewer' }, 'username'],
    [{ username: 'x'.repeat(65), password: 'correct horse battery', role: 'viewer' }, 'username'],
    [{ username: 'bob', password: 'short', role: 'viewer' }, 'password'],
    [{ username: 'bob', password: 'x'.repeat(1025), role: 'viewer' }, 'password'],
    [{ username: 'bob', password: 'correct horse battery', role: 'root' }, 'role']
  ]
  for (const [input, field] of bad) {
    await t.rejects(access.createAccount(SETUP_ACTOR, input as never), { code: 'VALIDATION_FAILED', field }, JSON.stringify(input).slice(0, 50))
  }
})

t.test('ensureAdmin creates the first admin once, generating a password when none is given', async (t) => {
  const { access } = setup()
  const first = await access.ensureAdmin({ username: 'root' })
  t.equal(first.created?.role, 'admin')
  t.match(first.generatedPassword, /^[\w-]{24}$/)
  t.same(await access.ensureAdmin({ username: 'root', password: 'another password here' }), { existing: true }, 'an existing admin is left alone, and says so')
  t.equal((await access.logIn('root', first.generatedPassword!)).username, 'root')
  const given = await access.ensureAdmin({ username: 'boss', password: 'a given password' })
  t.equal(given.generatedPassword, undefined)
})

t.test('logIn fails alike for an unknown user and a wrong password', async (t) => {
  const { access } = setup()
  await access.createAccount(SETUP_ACTOR, { username: 'ada', password: 'correct horse battery', role: 'viewer' })
  t.equal((await access.logIn('ada', 'correct horse battery')).role, 'viewer')
  const error = { code: 'INVALID_CREDENTIALS', message: 'wrong username or password' }
  await t.rejects(access.logIn('ada', 'wrong horse battery'), error)
  await t.rejects(access.logIn('nobody', 'correct horse battery'), error)
})

t.test('a key never gets a scope its creator lacks, nor a budget above the default unless an admin asks', async (t) => {
  const { access, callerWithRole } = setup()
  const viewer = await callerWithRole('viewer')
  const admin = await callerWithRole('admin')
  const own = await access.createApiKey(viewer, { name: 'reports' })
  t.same(own.scopes, ['people:read'], 'defaults to the creator\'s scopes')
  t.match(own.key, /^ps_[\w-]{54}$/)
  for (const scopes of [['people:write'], ['people:read', 'messages:send'], ['admin']]) {
    await t.rejects(access.createApiKey(viewer, { name: 'x', scopes }), { code: 'FORBIDDEN' }, scopes.join(' '))
  }
  await t.rejects(access.createApiKey(viewer, { name: 'x', scopes: ['people:delete'] }), { code: 'VALIDATION_FAILED', field: 'scopes' })
  await t.rejects(access.createApiKey(viewer, { name: 'x', rateLimit: 1001 }), { code: 'FORBIDDEN' })
  await t.rejects(access.createApiKey(viewer, { name: 'x', rateLimit: 0 }), { code: 'VALIDATION_FAILED', field: 'rateLimit' })
  await t.rejects(access.createApiKey(viewer, { name: ' ' }), { code: 'VALIDATION_FAILED', field: 'name' })
  t.equal((await access.createApiKey(admin, { name: 'batch', rateLimit: 50_000 })).rateLimit, 50_000)
  t.same((await access.createApiKey(admin, { name: 'ro', scopes: ['people:read', 'people:read'] })).scopes, ['people:read'])
})

t.test('keys are listed for their owner (admins see all) and only owners or admins revoke them', async (t) => {
  const { access, callerWithRole } = setup()
  const [viewer, editor, admin] = [await callerWithRole('viewer'), await callerWithRole('editor'), await callerWithRole('admin')]
  const v = await access.createApiKey(viewer, { name: 'v' })
  const e = await access.createApiKey(editor, { name: 'e' })
  t.same((await access.listApiKeys(viewer)).items.map((k) => k.id), [v.id])
  t.same((await access.listApiKeys(admin)).items.map((k) => k.id), [v.id, e.id])
  t.notOk('key' in (await access.listApiKeys(admin)).items[0]!, 'no secret in a listing')
  await t.rejects(access.revokeApiKey(viewer, e.id), { code: 'FORBIDDEN' })
  await t.rejects(access.getApiKeyUsage(viewer, e.id), { code: 'FORBIDDEN' })
  await t.rejects(access.revokeApiKey(viewer, 'not-an-id'), { code: 'API_KEY_NOT_FOUND' })
  await access.revokeApiKey(admin, e.id)
  await t.rejects(access.revokeApiKey(admin, e.id), { code: 'API_KEY_NOT_FOUND' }, 'revoking twice')
  t.same((await access.listApiKeys(admin)).items.map((k) => k.id), [v.id])
})

t.test('keys are listed a page at a time, oldest first: every active key once, whatever is revoked between pages', async (t) => {
  const { access, callerWithRole, clock } = setup()
  const [viewer, admin] = [await callerWithRole('viewer'), await callerWithRole('admin')]
  const keys = []
  for (let i = 0; i < 7; i++) {
    keys.push(await access.createApiKey(i === 3 ? admin : viewer, { name: `k${i}` }))
    // Two keys made in the same millisecond are ordered by id.
    if (i % 2 === 0) clock.set(new Date(clock.now().getTime() + 1).toISOString())
  }
  const walk = async (caller: typeof viewer, limit: number, between?: (page: number) => Promise<void>) => {
    const seen: string[] = []
    let cursor: string | undefined
    for (let page = 0; page < 20; page++) {
      const { items, next } = await access.listApiKeys(caller, { limit, ...(cursor === undefined ? {} : { cursor }) })
      t.ok(items.length <= limit)
      seen.push(...items.map((k) => k.id))
      if (next === undefined) return seen
      cursor = next
      await between?.(page)
    }
    throw new Error('the pages never ended')
  }
  const own = keys.filter((_, i) => i !== 3).map((k) => k.id)
  t.same(await walk(viewer, 2), own, 'the viewer\'s six keys, two a page')
  t.same(await walk(admin, 3), keys.map((k) => k.id), 'the admin sees all seven')
  t.same(await walk(admin, 7), keys.map((k) => k.id), 'a page that holds them all has no next')
  t.same((await access.listApiKeys(admin, { limit: 7 })).next, undefined)
  // The key a cursor names is revoked before the next page: the walk goes on after it.
  t.same(await walk(viewer, 2, async (page) => { if (page === 0) await access.revokeApiKey(viewer, own[1]!) }), own)
  t.same((await access.listApiKeys(viewer)).items.map((k) => k.id), own.filter((id) => id !== own[1]))

  const cursorOf = (key: string[]) => Buffer.from(JSON.stringify(key)).toString('base64url')
  const id = '0192f6c4-3b7a-7cc0-8f3e-2a6b1d9c4e5f'
  for (const cursor of ['', 'nonsense', cursorOf(['api-keys', '2026-11-21T10:00:00.000Z']), cursorOf(['api-keys', '+010000-01-01T00:00:00.000Z', id]), cursorOf(['2026-11-21T10:00:00.000Z', id]), cursorOf([`inbox:${id}`, '2026-11-21T10:00:00.000Z', id])]) {
    await t.rejects(access.listApiKeys(viewer, { cursor }), { code: 'INVALID_CURSOR', field: 'cursor' }, JSON.stringify(cursor))
  }
  for (const limit of [-1, 1001, 1.5]) await t.rejects(access.listApiKeys(viewer, { limit }), { code: 'VALIDATION_FAILED', field: 'limit' }, `limit ${limit}`)
})

t.test('the key cache answers without the repository until a revocation or expiry', async (t) => {
  const { access, ports, callerWithRole, clock } = setup()
  const viewer = await callerWithRole('viewer')
  const created = await access.createApiKey(viewer, { name: 'v' })
  let reads = 0
  const findByLookupId = ports.apiKeys.findByLookupId.bind(ports.apiKeys)
  ports.apiKeys.findByLookupId = async (lookupId) => { reads++; return findByLookupId(lookupId) }

  for (let i = 0; i < 5; i++) t.equal((await access.authenticateApiKey(created.key))?.id, created.id)
  t.equal(reads, 1, 'one read, then the cache')
  t.equal(await access.authenticateApiKey(`${created.key.slice(0, -1)}${created.key.endsWith('A') ? 'B' : 'A'}`), undefined, 'a wrong secret with a right lookup id')
  t.equal(await access.authenticateApiKey('ps_short'), undefined)
  t.equal(reads, 1, 'malformed keys and wrong secrets of cached keys cost no read')
  clock.set('2026-11-21T10:01:00.000Z')
  await access.authenticateApiKey(created.key)
  t.equal(reads, 2, 'expired entries are read again')

  const other = await access.createApiKey(viewer, { name: 'other' })
  await access.authenticateApiKey(other.key)
  await access.revokeApiKey(viewer, other.id)
  t.equal(await access.authenticateApiKey(other.key), undefined, 'revoked: refused on the next use')
  t.equal((await access.authenticateApiKey(created.key))?.id, created.id, 'other keys still work')
})

t.test('a revocation on another instance empties this instance\'s cache through the shared version', async (t) => {
  const shared: KeyRevocations = localKeyRevocations()
  const one = setup({ revocations: shared })
  // A second instance: its own cache, the same storage and revocation version.
  const two = createAccessUseCases({ ...one.ports })
  const viewer = await one.callerWithRole('viewer')
  const created = await one.access.createApiKey(viewer, { name: 'v' })
  t.ok(await two.authenticateApiKey(created.key), 'cached on instance two')
  await one.access.revokeApiKey(viewer, created.id)
  t.equal(await two.authenticateApiKey(created.key), undefined)
})

t.test('with the revocation version held elsewhere (no peek, as in Redis), cached keys and tokens still end at once', async (t) => {
  const local = localKeyRevocations()
  const elsewhere: KeyRevocations = { version: () => local.version(), revoked: () => local.revoked() }
  const one = setup({ revocations: elsewhere })
  const two = createAccessUseCases({ ...one.ports })
  const viewer = await one.callerWithRole('viewer')
  const created = await one.access.createApiKey(viewer, { name: 'v' })
  for (const instance of [one.access, two]) {
    const first = instance.authenticateApiKey(created.key)
    t.ok(first instanceof Promise, 'the version is asked for: a promise')
    t.equal((await first)?.id, created.id)
    t.equal((await instance.authenticateApiKey(created.key))?.id, created.id, 'then from the cache')
  }
  await one.access.revokeApiKey(viewer, created.id)
  t.equal(await one.access.authenticateApiKey(created.key), undefined, 'revoked: refused here')
  t.equal(await two.authenticateApiKey(created.key), undefined, 'and on the other instance')

  const ed = await one.access.createAccount(SETUP_ACTOR, { username: 'ed', password: 'correct horse battery', role: 'editor' })
  const subject = { accountId: ed.id, tokenVersion: 0 }
  t.match(await two.authenticateToken(subject), { kind: 'account', id: ed.id }, 'a token, cached on instance two')
  t.match(await two.authenticateToken(subject), { kind: 'account', id: ed.id }, 'then from the cache')
  await one.access.updateAccount(SETUP_ACTOR, ed.id, { role: 'viewer' })
  t.equal(await two.authenticateToken(subject), undefined, 'a new role ends the token there at once')
})

t.test('without a readable revocation version nothing is cached, so revocations still hold', async (t) => {
  const failing: KeyRevocations = { version: async () => { throw new Error('redis down') }, revoked: async () => {} }
  const warnings: unknown[] = []
  const { ports, callerWithRole, access: writer } = setup({ revocations: failing })
  const reader = createAccessUseCases(ports, { credentialCache: { onRevocationsUnavailable: (e) => warnings.push(e) } })
  const viewer = await callerWithRole('viewer')
  const created = await writer.createApiKey(viewer, { name: 'v' })
  t.ok(await reader.authenticateApiKey(created.key))
  await ports.apiKeys.revoke(created.id, new Date())
  t.equal(await reader.authenticateApiKey(created.key), undefined)
  t.equal(warnings.length, 2)
})

t.test('usage is counted in memory, flushed in batches and reported with what is pending', async (t) => {
  const { access, ports, callerWithRole, clock } = setup()
  const viewer = await callerWithRole('viewer')
  const key = await access.createApiKey(viewer, { name: 'v' })
  for (let i = 0; i < 3; i++) access.usageMeter.record(key.id)
  t.same(await access.getApiKeyUsage(viewer, key.id), { id: key.id, total: 3, byDay: [{ day: '2026-11-21', requests: 3 }] })
  await access.usageMeter.flush()
  t.same(await ports.apiKeyUsage.byDay(key.id), [{ day: '2026-11-21', requests: 3 }])
  clock.set('2026-11-22T00:00:00.000Z')
  access.usageMeter.record(key.id)
  t.same(await access.getApiKeyUsage(viewer, key.id), {
    id: key.id, total: 4, byDay: [{ day: '2026-11-21', requests: 3 }, { day: '2026-11-22', requests: 1 }]
  }, 'stored and pending counts together, split at midnight UTC')
})

t.test('a usage read while a flush is storing counts sees them once, never neither', async (t) => {
  const stored: UsageCount[] = []
  let release: () => void = () => {}
  const apiKeyUsage: ApiKeyUsageRepository = {
    async add (counts) {
      // The write the database has not answered yet.
      await new Promise<void>((resolve) => { release = resolve })
      stored.push(...counts)
    },
    async byDay (keyId) { return stored.filter((count) => count.keyId === keyId).map(({ day, requests }) => ({ day, requests })) }
  }
  const { access, callerWithRole } = setup({ apiKeyUsage })
  const viewer = await callerWithRole('viewer')
  const key = await access.createApiKey(viewer, { name: 'v' })
  for (let i = 0; i < 5; i++) access.usageMeter.record(key.id)
  const flushed = access.usageMeter.flush()
  const during = access.getApiKeyUsage(viewer, key.id)
  await new Promise((resolve) => setImmediate(resolve))
  access.usageMeter.record(key.id)
  release()
  await flushed
  t.equal((await during).total, 6, 'the five being stored, and the one counted since')
  t.equal((await access.getApiKeyUsage(viewer, key.id)).total, 6)
})

t.test('counts survive a failed flush and go out with the next one', async (t) => {
  let failNext = true
  const stored: unknown[] = []
  const apiKeyUsage: ApiKeyUsageRepository = {
    async add (counts) {
      if (failNext) { failNext = false; throw new Error('database away') }
      stored.push(...counts)
    },
    async byDay () { return [] }
  }
  const { access } = setup({ apiKeyUsage })
  access.usageMeter.record('k1')
  await t.rejects(access.usageMeter.flush(), /database away/)
  access.usageMeter.record('k1')
  await access.usageMeter.flush()
  t.same(stored, [{ keyId: 'k1', day: '2026-11-21', requests: 2 }])
  await access.usageMeter.flush()
  t.equal(stored.length, 1, 'nothing left to write')
})

t.test('entries cached before an outage of the revocation version are not trusted after it', async (t) => {
  let down = false
  const revocations: KeyRevocations = {
    version: async () => { if (down) throw new Error('redis down'); return 'v1' },
    revoked: async () => { throw new Error('redis down') }
  }
  const { access, ports, callerWithRole } = setup({ revocations })
  const viewer = await callerWithRole('viewer')
  const created = await access.createApiKey(viewer, { name: 'v' })
  t.ok(await access.authenticateApiKey(created.key), 'cached under v1')
  down = true
  // Revoked while the announcement cannot get through: the version stays v1.
  await ports.apiKeys.revoke(created.id, new Date())
  t.equal(await access.authenticateApiKey(created.key), undefined, 'during the outage: read from the database')
  down = false
  t.equal(await access.authenticateApiKey(created.key), undefined, 'after it: the old entry is gone, although the version is v1 again')
})

t.test('two admins demoting each other at once leave one admin: the rule holds inside the transaction', async (t) => {
  const { access, ports } = setup()
  const [ada, bob] = [await access.createAccount(SETUP_ACTOR, { username: 'ada', password: 'correct horse battery', role: 'admin' }), await access.createAccount(SETUP_ACTOR, { username: 'bob', password: 'correct horse battery', role: 'admin' })]
  const outcomes = await Promise.allSettled([access.updateAccount(SETUP_ACTOR, ada.id, { role: 'viewer' }), access.updateAccount(SETUP_ACTOR, bob.id, { disabled: true })])
  t.same(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected'])
  t.match(outcomes.find((o) => o.status === 'rejected'), { reason: { code: 'LAST_ADMIN' } })
  const admins = (await ports.accounts.list({ limit: 10 })).filter((a) => a.role === 'admin' && !a.disabled)
  t.equal(admins.length, 1)
  await t.rejects(access.deleteAccount(SETUP_ACTOR, admins[0]!.id), { code: 'LAST_ADMIN' })
})

t.test('a token version goes up with a new role or password and with disabling, not with enabling or no change', async (t) => {
  const { access, ports } = setup()
  const vera = await access.createAccount(SETUP_ACTOR, { username: 'vera', password: 'correct horse battery', role: 'viewer' })
  const version = async () => (await ports.accounts.findById(vera.id))!.tokenVersion
  const steps: Array<[Parameters<typeof access.updateAccount>[2], number]> = [
    [{}, 0], [{ role: 'viewer' }, 0], [{ role: 'editor' }, 1], [{ password: 'another fine password' }, 2],
    [{ disabled: true }, 3], [{ disabled: true }, 3], [{ disabled: false }, 3]
  ]
  for (const [changes, expected] of steps) {
    await access.updateAccount(SETUP_ACTOR, vera.id, changes)
    t.equal(await version(), expected, JSON.stringify(changes))
  }
  await access.changePassword(vera.id, { currentPassword: 'another fine password', newPassword: 'and yet another one' })
  t.equal(await version(), 4, 'POST /auth/password')
  await t.rejects(access.changePassword(vera.id, { currentPassword: 'wrong', newPassword: 'and yet another one' }), { code: 'INVALID_CREDENTIALS' })
  t.equal(await version(), 4)
})
