import t from 'tap'
import { scryptPasswordHasher } from '@people-service/domain'
import { createInMemoryPorts, SETUP_ACTOR } from '@people-service/domain/testing'
import { build, PASSWORD } from './helper.js'

t.test('login returns a bearer token that authenticates later requests', async (t) => {
  const { app } = await build(t)
  await app.access.useCases.createAccount(SETUP_ACTOR, { username: 'ada', password: PASSWORD, role: 'viewer' })
  const response = await app.inject({ method: 'POST', url: '/auth/login', payload: { username: 'ada', password: PASSWORD } })
  t.equal(response.statusCode, 200)
  t.equal(response.headers['cache-control'], 'no-store')
  const body = response.json()
  t.same(Object.keys(body).sort(), ['access_token', 'expires_in', 'token_type'])
  t.equal(body.token_type, 'Bearer')
  t.equal(body.expires_in, 900)
  t.match(body.access_token, /^[\w-]+\.[\w-]+\.[\w-]+$/)
  const people = await app.inject({ method: 'GET', url: '/people', headers: { authorization: `Bearer ${body.access_token}` } })
  t.equal(people.statusCode, 200)
})

t.test('an unknown user and a wrong password get the same 401', async (t) => {
  const { app } = await build(t)
  await app.access.useCases.createAccount(SETUP_ACTOR, { username: 'ada', password: PASSWORD, role: 'viewer' })
  const wrong = await app.inject({ method: 'POST', url: '/auth/login', payload: { username: 'ada', password: 'not the password' } })
  const unknown = await app.inject({ method: 'POST', url: '/auth/login', payload: { username: 'nobody', password: PASSWORD } })
  t.equal(wrong.statusCode, 401)
  t.same(wrong.json(), { statusCode: 401, error: 'Unauthorized', message: 'wrong username or password', code: 'INVALID_CREDENTIALS' })
  t.same(unknown.json(), wrong.json())
  t.same(
    Object.keys(unknown.headers).filter((h) => h !== 'x-request-id' && h !== 'date').sort(),
    Object.keys(wrong.headers).filter((h) => h !== 'x-request-id' && h !== 'date').sort()
  )
})

t.test('a password is compared as sent: lone surrogates do not stand in for U+FFFD', async (t) => {
  const { app } = await build(t)
  const replacement = '\uFFFD'.repeat(15)
  await app.access.useCases.createAccount(SETUP_ACTOR, { username: 'ada', password: replacement, role: 'viewer' })
  const login = (password: string) => app.inject({ method: 'POST', url: '/auth/login', payload: { username: 'ada', password } })
  t.equal((await login(replacement)).statusCode, 200)
  // Hashed as UTF-8, each lone surrogate became U+FFFD: these had logged in.
  for (const lone of ['\ud800'.repeat(15), '\udc00\udfff'.repeat(7) + '\ud800']) {
    const refused = await login(lone)
    t.same([refused.statusCode, refused.json().code], [401, 'INVALID_CREDENTIALS'])
  }
})

t.test('an unknown user and a wrong password cost comparable work (real scrypt parameters)', async (t) => {
  const { app } = await build(t, { ports: createInMemoryPorts({ passwords: scryptPasswordHasher() }) })
  await app.access.useCases.createAccount(SETUP_ACTOR, { username: 'ada', password: PASSWORD, role: 'viewer' })
  // The work a login costs, in CPU time of the whole process (scrypt runs on
  // libuv's pool): what an attacker's clock measures on an idle server, and
  // unlike wall time it does not swing when other processes share the cores.
  const time = async (username: string): Promise<number> => {
    const start = process.cpuUsage()
    const response = await app.inject({ method: 'POST', url: '/auth/login', payload: { username, password: 'not the password' } })
    t.equal(response.statusCode, 401)
    const { user, system } = process.cpuUsage(start)
    return (user + system) / 1e3
  }
  const known: number[] = []
  const unknown: number[] = []
  for (let i = 0; i < 5; i++) {
    known.push(await time('ada'))
    unknown.push(await time(`nobody-${i}`))
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
  const ratio = median(unknown) / median(known)
  t.ok(ratio > 0.6 && ratio < 1.6, `unknown user ${median(unknown).toFixed(0)} ms of CPU vs wrong password ${median(known).toFixed(0)} ms`)
  t.ok(median(unknown) > 50, 'an unknown user still pays for a full hash')
})

t.test('login bodies are checked before anything else', async (t) => {
  const { app } = await build(t)
  const bad: Array<[string, unknown]> = [
    ['no password', { username: 'ada' }],
    ['no username', { password: PASSWORD }],
    ['an extra field', { username: 'ada', password: PASSWORD, role: 'admin' }],
    ['a number as password', { username: 'ada', password: 12345 }],
    ['an over-long password (past what normalizing could bring within 1,024)', { username: 'ada', password: 'x'.repeat(4097) }]
  ]
  for (const [name, payload] of bad) {
    const response = await app.inject({ method: 'POST', url: '/auth/login', payload: payload as object })
    t.equal(response.statusCode, 400, name)
    t.equal(response.json().code, 'VALIDATION_FAILED', name)
  }
  const text = await app.inject({ method: 'POST', url: '/auth/login', headers: { 'content-type': 'text/plain' }, payload: 'ada:pw' })
  t.equal(text.statusCode, 400)
})

t.test('admins create accounts; the response never holds a password or hash', async (t) => {
  const { app, admin, as } = await build(t)
  const response = await app.inject({ method: 'POST', url: '/users', headers: admin, payload: { username: 'grace', password: PASSWORD, role: 'editor' } })
  t.equal(response.statusCode, 201)
  const body = response.json()
  t.same(Object.keys(body).sort(), ['createdAt', 'disabled', 'id', 'role', 'username'])
  t.match(body, { username: 'grace', role: 'editor', disabled: false })
  t.notMatch(response.body, /scrypt|password/i)
  const login = await app.inject({ method: 'POST', url: '/auth/login', payload: { username: 'grace', password: PASSWORD } })
  t.equal(login.statusCode, 200, 'the new account can log in')

  const again = await app.inject({ method: 'POST', url: '/users', headers: admin, payload: { username: 'grace', password: PASSWORD, role: 'viewer' } })
  t.equal(again.statusCode, 409)
  t.equal(again.json().code, 'USERNAME_TAKEN')
  for (const [name, payload] of Object.entries({
    'an unknown role': { username: 'x1', password: PASSWORD, role: 'root' },
    'a short password': { username: 'x2', password: 'short', role: 'viewer' },
    'a username with spaces': { username: 'x y', password: PASSWORD, role: 'viewer' },
    'an extra field': { username: 'x3', password: PASSWORD, role: 'viewer', passwordHash: 'x' }
  })) {
    t.equal((await app.inject({ method: 'POST', url: '/users', headers: admin, payload })).statusCode, 400, name)
  }
  const editor = await as('editor')
  t.equal((await app.inject({ method: 'POST', url: '/users', headers: editor, payload: { username: 'x4', password: PASSWORD, role: 'admin' } })).statusCode, 403)
  t.equal((await app.inject({ method: 'POST', url: '/users', payload: { username: 'x5', password: PASSWORD, role: 'admin' } })).statusCode, 401)
})
