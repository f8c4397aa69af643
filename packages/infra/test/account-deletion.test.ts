import t, { type Test } from 'tap'
import { createAccessUseCases, uuidv7Generator, type Account, type ApiKey } from '@people-service/domain'
import { createInMemoryPorts, SETUP_ACTOR } from '@people-service/domain/testing'
import { createRepositories, type DatabaseHandle } from '@people-service/infra'
import { postgresDatabase, type Teardown } from '@people-service/infra/testing'
import { kyselyAccountRepository } from '../src/account/kysely-account.repository.js'
import { sqliteFile } from './helper.js'

/*
 * Deleting an account with very many keys goes a step at a time on SQLite
 * (src/account/account-deletion.ts). Here a step is 3 usage rows or 2 keys,
 * so that an account of 7 keys, each used on 2 days, crosses every
 * boundary: it is disabled at once, everything of its goes and nothing of
 * anyone else's, the caller is asked before each step after the first and
 * can stop it, and deleting again finishes it. PostgreSQL deletes it all
 * in the one transaction.
 */

const stores: Record<string, (t: Teardown) => Promise<DatabaseHandle>> = {
  'sqlite file': sqliteFile,
  postgres: postgresDatabase
}

const STEPS = { usageRows: 3, keyRows: 2 }
const KEYS = 7
const DAYS = ['2026-11-22', '2026-11-23']

const ids = uuidv7Generator()
const account = (username: string, role: Account['role'] = 'editor'): Account =>
  ({ id: ids.next(), username, role, passwordHash: '$scrypt$ln=10,r=8,p=1$c2FsdA$aGFzaA', disabled: false, tokenVersion: 0, deleting: false, createdAt: new Date() })
const apiKey = (ownerId: string): ApiKey =>
  ({ id: ids.next(), ownerId, name: 'k', scopes: ['people:read'], rateLimit: null, lookupId: ids.next().slice(-11), secretHash: 'h'.repeat(64), createdAt: new Date(), revokedAt: null })

const world = async (handle: DatabaseHandle, role: Account['role'] = 'editor') => {
  const repositories = { ...createRepositories(handle), accounts: kyselyAccountRepository(handle.db, handle.dialect, STEPS) }
  const ports = createInMemoryPorts(repositories)
  const { accounts, apiKeys, apiKeyUsage } = repositories
  const [victim, bystander] = [account('victim', role), account('bystander', role)]
  for (const a of [victim, bystander]) await accounts.insert(a)
  const keys = Array.from({ length: KEYS }, () => apiKey(victim.id))
  const kept = apiKey(bystander.id)
  for (const k of [...keys, kept]) await apiKeys.insert(k)
  await apiKeys.revoke(keys[0]!.id, new Date())
  for (const day of DAYS) await apiKeyUsage.add([...keys, kept].map((k) => ({ keyId: k.id, day, requests: 1 })))

  /** Keys of the victim left, and whether the bystander's key and usage are as they were. */
  const left = async () => ({
    keys: (await Promise.all(keys.map((k) => apiKeys.findById(k.id)))).filter((k) => k !== undefined).length,
    usage: (await Promise.all(keys.map((k) => apiKeyUsage.byDay(k.id)))).flat().length
  })
  const othersIntact = async (t: Test) => {
    t.same(await apiKeys.findById(kept.id), kept, "the bystander's key stays")
    t.same(await apiKeyUsage.byDay(kept.id), DAYS.map((day) => ({ day, requests: 1 })), 'with its usage')
    t.same(await accounts.findById(bystander.id), bystander)
  }
  return { useCases: createAccessUseCases(ports), ports, accounts, apiKeys, victim, bystander, left, othersIntact }
}

for (const [name, open] of Object.entries(stores)) {
  t.test(`${name}: an account with more than a step of keys goes whole, disabled from the first step`, async (t) => {
    const { useCases, ports, accounts, victim, left, othersIntact } = await world(await open(t))
    const before = await ports.revocations.version()
    const seen: Array<Account | undefined> = []
    await useCases.deleteAccount(SETUP_ACTOR, victim.id, { beforeNextStep: async () => { seen.push(await accounts.findById(victim.id)) } })
    t.equal(await accounts.findById(victim.id), undefined, 'the account is gone')
    t.same(await left(), { keys: 0, usage: 0 }, 'with every key, revoked or not, and their usage')
    t.not(await ports.revocations.version(), before, 'the revocation was announced')
    await othersIntact(t)
    if (name === 'postgres') {
      t.same(seen, [], 'in the one transaction: nobody asked to wait')
      return
    }
    // 14 usage rows and 7 keys: steps of the first 2 keys' 4 rows (3, then 1 and the keys), and so on.
    t.ok(seen.length >= KEYS / STEPS.keyRows, `asked before each step after the first (${seen.length} times)`)
    t.ok(seen.every((a) => a?.disabled === true && a.tokenVersion === victim.tokenVersion + 1),
      'meanwhile the account is there, disabled, its tokens of a new version: nothing of it works')
  })

  t.test(`${name}: a deletion cut short leaves the account disabled; deleting again finishes it`, async (t) => {
    const { useCases, accounts, victim, left, othersIntact } = await world(await open(t))
    let asked = 0
    const stopping = async () => { if (++asked === 2) throw new Error('stopped') }
    if (name === 'postgres') {
      await useCases.deleteAccount(SETUP_ACTOR, victim.id, { beforeNextStep: stopping })
      t.equal(asked, 0, 'nothing to cut short: one transaction')
      t.equal(await accounts.findById(victim.id), undefined)
      return
    }
    await t.rejects(useCases.deleteAccount(SETUP_ACTOR, victim.id, { beforeNextStep: stopping }), { message: 'stopped' })
    const halfway = await left()
    t.match(await accounts.findById(victim.id), { disabled: true, deleting: true }, 'still there, disabled, marked as being deleted')
    await t.rejects(useCases.updateAccount(SETUP_ACTOR, victim.id, { disabled: false }), { code: 'ACCOUNT_BEING_DELETED' }, 'no admin can enable it again')
    t.ok(halfway.keys + halfway.usage > 0 && halfway.keys + halfway.usage < KEYS + KEYS * DAYS.length, `part of it went (${JSON.stringify(halfway)})`)
    await useCases.deleteAccount(SETUP_ACTOR, victim.id)
    t.equal(await accounts.findById(victim.id), undefined)
    t.same(await left(), { keys: 0, usage: 0 })
    await othersIntact(t)
  })
}

t.test('sqlite file: while its keys go, an account cannot be enabled again, nor changed otherwise: the deletion finishes', async (t) => {
  const { useCases, accounts, victim, bystander, left } = await world(await sqliteFile(t), 'admin')
  const refusals: unknown[] = []
  // What the review did: the other admin enables the victim again, which would then disable that admin.
  let asked = 0
  const meanwhile = async () => {
    if (++asked > 1) return
    for (const changes of [{ disabled: false }, { role: 'editor' as const }, { password: 'a new password of some length' }]) {
      await useCases.updateAccount(SETUP_ACTOR, victim.id, changes).then(() => refusals.push('changed'), (error: unknown) => refusals.push(error))
    }
  }
  await useCases.deleteAccount(SETUP_ACTOR, victim.id, { beforeNextStep: meanwhile })
  t.equal(refusals.length, 3)
  t.ok(refusals.every((r) => r instanceof Error && 'code' in r && r.code === 'ACCOUNT_BEING_DELETED'), 'every change refused, 409 ACCOUNT_BEING_DELETED')
  t.equal(await accounts.findById(victim.id), undefined, 'the account is gone')
  t.same(await left(), { keys: 0, usage: 0 })
  t.match(await accounts.findById(bystander.id), { disabled: false, role: 'admin' }, 'the other admin stays one')
})

t.test('sqlite file: an account enabled again in the store while its keys go is checked again: the last admin stays, and what it was given is revoked', async (t) => {
  const { useCases, ports, accounts, apiKeys, victim, bystander } = await world(await sqliteFile(t), 'admin')
  let asked = 0
  let announced = ''
  // Past the use cases (which refuse it), the store enables the victim again, and the victim disables the other admin.
  const meanwhile = async () => {
    if (++asked > 1) return
    await accounts.changeExclusively(async (tx) => {
      await tx.update({ ...(await tx.findById(victim.id))!, disabled: false })
      await tx.update({ ...bystander, disabled: true })
    })
    announced = await ports.revocations.version()
  }
  await t.rejects(useCases.deleteAccount(SETUP_ACTOR, victim.id, { beforeNextStep: meanwhile }), { code: 'LAST_ADMIN' })
  t.match(await accounts.findById(victim.id), { disabled: false, role: 'admin' }, 'the only enabled admin is not deleted')

  // Enabled again meanwhile, not the last admin: the deletion finishes, and is announced once more.
  await accounts.changeExclusively(async (tx) => tx.update({ ...bystander, disabled: false }))
  for (let i = 0; i < KEYS; i++) await apiKeys.insert(apiKey(victim.id))
  let enabledAgain = false
  await useCases.deleteAccount(SETUP_ACTOR, victim.id, {
    beforeNextStep: async () => {
      if (enabledAgain) return
      enabledAgain = true
      await accounts.changeExclusively(async (tx) => tx.update({ ...(await tx.findById(victim.id))!, disabled: false }))
      announced = await ports.revocations.version()
    }
  })
  t.ok(enabledAgain)
  t.equal(await accounts.findById(victim.id), undefined)
  t.not(await ports.revocations.version(), announced, 'credentials it got while enabled again are revoked by the last transaction')
})

t.test('sqlite file: an account of fewer keys than a step goes in the one transaction, asking nobody', async (t) => {
  const handle = await sqliteFile(t)
  const repositories = { ...createRepositories(handle), accounts: kyselyAccountRepository(handle.db, handle.dialect, { usageRows: 100, keyRows: 100 }) }
  const useCases = createAccessUseCases(createInMemoryPorts(repositories))
  const small = account('small')
  await repositories.accounts.insert(small)
  for (let i = 0; i < 5; i++) await repositories.apiKeys.insert(apiKey(small.id))
  let asked = 0
  await useCases.deleteAccount(SETUP_ACTOR, small.id, { beforeNextStep: async () => { asked++ } })
  t.equal(asked, 0)
  t.equal(await repositories.accounts.findById(small.id), undefined)
})
