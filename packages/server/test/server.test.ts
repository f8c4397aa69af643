import t from 'tap'
import { connect } from 'node:net'
import { BetterSqlite3 } from '@people-service/infra'
import { ADMIN_PASSWORD, call, JWT_SECRET, login, start, tempDatabaseUrl } from './helper.js'

t.test('the first admin: generated password printed once, never again', async (t) => {
  const DATABASE_URL = tempDatabaseUrl(t)
  const first = await start(t, { DATABASE_URL, ADMIN_PASSWORD: '', LOG_LEVEL: 'info' })
  const printed = first.logs.filter((line) => line.includes('generated password'))
  t.equal(printed.length, 1)
  const password = /generated password (\S+) /.exec(printed[0]!)?.[1]
  t.ok(password)
  t.equal((await call(first.url, 'GET', '/people', await login(first.url, 'admin', password))).status, 200)
  await first.close()
  const second = await start(t, { DATABASE_URL, ADMIN_PASSWORD: '', LOG_LEVEL: 'info' })
  t.notOk(second.logs.some((line) => line.includes('generated password')), 'the admin exists: nothing generated or printed')
  t.ok(await login(second.url, 'admin', password), 'the same password still works')
})

t.test('a changed ADMIN_PASSWORD is ignored once the account exists, and the start log says so', async (t) => {
  const DATABASE_URL = tempDatabaseUrl(t)
  const ignored = (logs: string[]) => logs.filter((line) => line.includes('ADMIN_PASSWORD is set but ignored'))
  const first = await start(t, { DATABASE_URL })
  t.same(ignored(first.logs), [], 'the first start creates the account with it')
  await first.close()

  const changed = 'a new password in the environment'
  const second = await start(t, { DATABASE_URL, ADMIN_PASSWORD: changed })
  const lines = ignored(second.logs)
  t.equal(lines.length, 1)
  t.match(JSON.parse(lines[0]!), { level: 40, username: 'admin', msg: /accounts exist, so the bootstrap admin "admin" is neither created nor changed/ })
  t.notOk(second.logs.some((line) => line.includes(changed)), 'the password itself is not logged')
  t.equal((await call(second.url, 'POST', '/auth/login', {}, { username: 'admin', password: changed })).status, 401)
  t.ok(await login(second.url, 'admin', ADMIN_PASSWORD), 'the password the account was created with still works')
  await second.close()

  const third = await start(t, { DATABASE_URL, ADMIN_PASSWORD: '' })
  t.same(ignored(third.logs), [], 'no ADMIN_PASSWORD: nothing to ignore')
})

t.test('without JWT_SECRET a development secret is made once and kept in the database', async (t) => {
  const DATABASE_URL = tempDatabaseUrl(t)
  const first = await start(t, { DATABASE_URL, JWT_SECRET: '' })
  const admin = await login(first.url)
  await first.close()
  const second = await start(t, { DATABASE_URL, JWT_SECRET: '' })
  t.equal((await call(second.url, 'GET', '/people', admin)).status, 200, 'a token survives a restart')
  const other = await start(t, { DATABASE_URL: tempDatabaseUrl(t), JWT_SECRET: '' })
  t.equal((await call(other.url, 'GET', '/people', admin)).status, 401, 'another database, another secret')
})

t.test('usage counted in memory reaches the database at shutdown', async (t) => {
  const DATABASE_URL = tempDatabaseUrl(t)
  const server = await start(t, { DATABASE_URL, USAGE_FLUSH_INTERVAL_MS: '3600000' })
  const admin = await login(server.url)
  const { id, key } = (await call(server.url, 'POST', '/api-keys', admin, { name: 'k' })).json()
  for (let i = 0; i < 7; i++) t.equal((await call(server.url, 'GET', '/people', { 'x-api-key': key })).status, 200)
  await server.close()
  const raw = new BetterSqlite3(DATABASE_URL.slice('sqlite:'.length), { readonly: true })
  t.teardown(() => raw.close())
  t.same(raw.prepare('select key_id, requests from api_key_usage').all(), [{ key_id: id, requests: 7 }])
  t.same(raw.prepare('select count(*) as n from api_key where secret_hash = ?').get(key), { n: 0 }, 'the key itself is not stored')
})

t.test('a credential cache longer than the contract\'s 5 s allows is warned of at start, and the default is not', async (t) => {
  const warning = (logs: string[]) => logs.filter((line) => line.includes('API_KEY_CACHE_TTL_MS is'))
  const long = await start(t, { DATABASE_URL: tempDatabaseUrl(t), API_KEY_CACHE_TTL_MS: '4000' })
  t.match(JSON.parse(warning(long.logs)[0] ?? '{}'), { level: 40, msg: /^API_KEY_CACHE_TTL_MS is 4000: .* past the contract's 5 s; less than 4000 keeps it$/ })
  const byDefault = await start(t, { DATABASE_URL: tempDatabaseUrl(t) })
  t.same(warning(byDefault.logs), [])
})

t.test('a request logs at most 512 characters of its URL and Host, whoever sends it', async (t) => {
  const server = await start(t, { DATABASE_URL: tempDatabaseUrl(t), LOG_LEVEL: 'info' })
  const { hostname, port } = new URL(server.url)
  // Anonymous and uncharged: 15 KB of URL had been 15 KB of log, twice per request.
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(`GET /people?q=${'a'.repeat(15_000)} HTTP/1.1\r\nHost: ${'h'.repeat(600)}\r\nConnection: close\r\n\r\n`))
    let received = ''
    socket.on('data', (chunk) => { received += String(chunk) })
    socket.on('close', () => resolve(received))
    socket.on('error', reject)
  })
  t.match(answer, /^HTTP\/1\.1 401 /)
  await server.close()
  const lines = server.logs.filter((line) => line.includes('"url"'))
  t.ok(lines.length > 0, 'the request was logged')
  for (const line of lines) {
    t.ok(line.length < 2000, `a line of ${line.length} characters`)
    const { req } = JSON.parse(line) as { req: { url: string, host: string } }
    t.equal(req.url, `/people?q=${'a'.repeat(502)}… (15010 characters)`, 'the URL cut, its length said')
    t.equal(req.host, `${'h'.repeat(512)}… (600 characters)`)
  }
})

t.test('logs never hold a password, token, key or secret; credential headers are redacted', async (t) => {
  const metricsToken = 'the-metrics-token-of-the-log-test-only'
  const server = await start(t, { DATABASE_URL: tempDatabaseUrl(t), LOG_LEVEL: 'trace', METRICS_TOKEN: metricsToken })
  const admin = await login(server.url)
  const token = admin.authorization!.slice('Bearer '.length)
  const created = (await call(server.url, 'POST', '/api-keys', admin, { name: 'k' })).json()
  await call(server.url, 'POST', '/users', admin, { username: 'grace', password: 'grace has a long password', role: 'editor' })
  await call(server.url, 'POST', '/auth/login', {}, { username: 'grace', password: 'grace has a long password' })
  await call(server.url, 'POST', '/auth/login', {}, { username: 'grace', password: 'a wrong password guess' })
  const grace = await login(server.url, 'grace', 'grace has a long password')
  await call(server.url, 'POST', '/auth/password', grace, { currentPassword: 'grace has a long password', newPassword: 'grace has a newer password' })
  await call(server.url, 'GET', '/metrics', { authorization: `Bearer ${metricsToken}` })
  await call(server.url, 'GET', '/people', { 'x-api-key': created.key })
  await call(server.url, 'GET', '/people', { 'x-api-key': `${created.key.slice(0, -4)}AAAA` })
  await call(server.url, 'GET', '/people', { authorization: `Bearer ${token}x` })
  await call(server.url, 'GET', '/nowhere', admin)
  await call(server.url, 'POST', '/person', admin, '{"name": broken')
  // What a handler or plugin logging a request's headers or a body would write.
  server.log.info({ req: { headers: { authorization: admin.authorization, 'x-api-key': created.key } } }, 'headers of a request')
  server.log.info({ headers: { authorization: admin.authorization, 'x-api-key': created.key } }, 'bare headers')
  server.log.info({ body: { username: 'grace', password: 'grace has a long password' } }, 'a login body')
  server.log.info({ body: { currentPassword: 'grace has a long password', newPassword: 'grace has a newer password' } }, 'a password change body')
  await server.close()

  const text = server.logs.join('')
  t.ok(server.logs.length > 20, `trace logs were written (${server.logs.length} lines)`)
  const secrets = {
    'admin password': ADMIN_PASSWORD,
    'user password': 'grace has a long password',
    'wrong guess': 'a wrong password guess',
    'access token signature': token.split('.')[2]!,
    'API key': created.key.slice(3),
    'JWT secret': JWT_SECRET,
    'new password': 'grace has a newer password',
    'metrics token': metricsToken
  }
  for (const [name, secret] of Object.entries(secrets)) t.notOk(text.includes(secret), `no ${name} in the logs`)
  const redacted = server.logs.filter((line) => line.includes('[redacted]'))
  t.same(redacted.map((line) => JSON.parse(line).msg), ['bare headers', 'a login body', 'a password change body'], 'credential fields are censored')
  t.match(server.logs.find((line) => line.includes('headers of a request')), /"req":\{\}/, 'the request serializer drops headers before redaction is even needed')
})
