import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { createInMemoryPorts, fastPasswordHasher } from '@people-service/domain/testing'
import type { PasswordHasher } from '@people-service/domain'
import { build, loginAs, PASSWORD } from './helper.js'

/*
 * Password hashing is the costliest thing a request can ask for. These
 * attack it as a caller would: requests about no account, and several
 * callers hashing at once while someone else logs in.
 */

/**
 * A hasher standing in for scrypt on a 2-core machine: `cores` hashes at
 * once, each `ms` of wall time, the rest waiting in order, as libuv's pool
 * holds them; it counts what it was asked.
 */
const machineHasher = ({ cores, ms }: { cores: number, ms: number }) => {
  const inner = fastPasswordHasher()
  let busy = 0
  const waiting: Array<() => void> = []
  const counts = { hash: 0, verify: 0 }
  const onCore = async <T>(work: () => Promise<T>): Promise<T> => {
    if (busy >= cores) await new Promise<void>((resolve) => waiting.push(resolve))
    else busy++
    try {
      await sleep(ms)
      return await work()
    } finally {
      const next = waiting.shift()
      if (next === undefined) busy--
      else next()
    }
  }
  const hasher: PasswordHasher = {
    hash: (password) => { counts.hash++; return onCore(() => inner.hash(password)) },
    verify: (password, hash) => { counts.verify++; return onCore(() => inner.verify(password, hash)) },
    decoyHash: inner.decoyHash
  }
  return { hasher, counts }
}

t.test('a password change for no account is 404 without hashing anything', async (t) => {
  const { hasher, counts } = machineHasher({ cores: 2, ms: 1 })
  const { app, admin } = await build(t, { ports: createInMemoryPorts({ passwords: hasher }) })
  counts.hash = 0
  const responses = await Promise.all(Array.from({ length: 60 }, (_, i) => app.inject({
    method: 'PATCH', url: `/users/0192f6c4-0000-7000-8000-${String(i).padStart(12, '0')}`, headers: admin, payload: { password: 'a new password for nobody' }
  })))
  t.same(new Set(responses.map((r) => r.statusCode)), new Set([404]))
  t.equal(counts.hash, 0, 'no hash was made')
  const taken = await app.inject({ method: 'POST', url: '/users', headers: admin, payload: { username: 'taken', password: PASSWORD, role: 'viewer' } })
  t.equal(taken.statusCode, 201)
  counts.hash = 0
  t.equal((await app.inject({ method: 'POST', url: '/users', headers: admin, payload: { username: 'taken', password: PASSWORD, role: 'viewer' } })).statusCode, 409)
  t.equal(counts.hash, 0, 'a taken username is 409 before any hashing')
})

t.test('three admins hashing in parallel cannot push another\'s login past 1.5 s: the rest of their requests wait their turn or get 429', async (t) => {
  // 300 ms a hash, two at once: scrypt's cost on the reference machine.
  const { hasher } = machineHasher({ cores: 2, ms: 300 })
  const { app, admin } = await build(t, { ports: createInMemoryPorts({ passwords: hasher }) })
  const victim = (await app.inject({ method: 'POST', url: '/users', headers: admin, payload: { username: 'victim', password: PASSWORD, role: 'viewer' } })).json<{ id: string }>()
  await app.inject({ method: 'POST', url: '/users', headers: admin, payload: { username: 'bystander', password: PASSWORD, role: 'viewer' } })
  const attackers = []
  for (const i of [1, 2, 3]) attackers.push(await loginAs(app, 'admin', `attacker-${i}`))
  const flood = attackers.flatMap((headers) => Array.from({ length: 20 }, () => app.inject({
    method: 'PATCH', url: `/users/${victim.id}`, headers, payload: { password: 'an attacker\'s password, again' }
  })))
  await sleep(50)
  const started = performance.now()
  const login = await app.inject({ method: 'POST', url: '/auth/login', payload: { username: 'bystander', password: PASSWORD } })
  const elapsed = performance.now() - started
  t.equal(login.statusCode, 200, 'the bystander logs in')
  t.ok(elapsed < 1500, `the bystander's login took ${Math.round(elapsed)} ms`)
  const answers = await Promise.all(flood)
  const refused = answers.filter((r) => r.statusCode === 429)
  t.ok(answers.some((r) => r.statusCode === 200), 'the attackers\' own turns are served')
  t.ok(refused.length > 0, 'what exceeds their turns is refused at once')
  t.match(refused[0]?.json(), { statusCode: 429, code: 'RATE_LIMITED', message: /too many password checks at once/ })
  t.equal(refused[0]?.headers['retry-after'], '1')
})
