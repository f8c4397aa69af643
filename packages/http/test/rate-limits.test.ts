import t from 'tap'
import type { PasswordHasher } from '@people-service/domain'
import { createInMemoryPorts, fastPasswordHasher, SETUP_ACTOR } from '@people-service/domain/testing'
import { apiKeyOf, budgetOf, build, loginAs, PASSWORD, weightedRoutes } from './helper.js'

t.test('two callers: one exhausts its budget, the other is unaffected', async (t) => {
  const { app } = await build(t, { access: { limits: { max: 3, windowMs: 60_000 } } })
  const alice = await loginAs(app, 'viewer')
  const bob = await loginAs(app, 'viewer')
  for (let remaining = 2; remaining >= 0; remaining--) {
    const response = await app.inject({ method: 'GET', url: '/people', headers: alice })
    t.equal(response.statusCode, 200)
    t.equal(response.headers['ratelimit-limit'], '3')
    t.equal(response.headers['ratelimit-remaining'], String(remaining))
    t.ok(Number(response.headers['ratelimit-reset']) > 0 && Number(response.headers['ratelimit-reset']) <= 60)
  }
  const limited = await app.inject({ method: 'GET', url: '/people', headers: alice })
  t.equal(limited.statusCode, 429)
  t.match(limited.json(), { statusCode: 429, error: 'Too Many Requests', code: 'RATE_LIMITED', message: /3 requests per 60 s/ })
  t.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After')
  t.equal(limited.headers['ratelimit-remaining'], '0')
  t.equal(limited.headers['content-type'], 'application/json; charset=utf-8')

  const other = await app.inject({ method: 'GET', url: '/people', headers: bob })
  t.equal(other.statusCode, 200, 'another caller keeps its own budget')
  t.equal(other.headers['ratelimit-remaining'], '2')
})

t.test('a key\'s own rateLimit bounds the key; what it serves counts against its owner too, what it refuses does not', async (t) => {
  const { app, admin } = await build(t, { access: { limits: { max: 5 } } })
  const key = await apiKeyOf(app, admin, { rateLimit: 2 })
  const headers = { 'x-api-key': key['x-api-key'] }
  const statuses = []
  for (let i = 0; i < 3; i++) statuses.push((await app.inject({ method: 'GET', url: '/people', headers })).statusCode)
  t.same(statuses, [200, 200, 429])
  const owner = await app.inject({ method: 'GET', url: '/people', headers: admin })
  t.equal(owner.statusCode, 200)
  t.equal(owner.headers['ratelimit-limit'], '5')
  // The helper's key creation, two served through the key, this one.
  t.equal(owner.headers['ratelimit-remaining'], '1')
})

t.test('one account, one budget: minting keys adds no throughput', async (t) => {
  const { app } = await build(t, { access: { limits: { max: 4, windowMs: 60_000 } } })
  const editor = await loginAs(app, 'editor')
  const keys = [await apiKeyOf(app, editor), await apiKeyOf(app, editor)]
  // The two key creations spent two of the account's four.
  const first = await app.inject({ method: 'GET', url: '/people', headers: { 'x-api-key': keys[0]!['x-api-key'] } })
  t.equal(first.statusCode, 200)
  t.equal(first.headers['ratelimit-limit'], '4', 'the account\'s budget is the tighter one')
  t.equal(first.headers['ratelimit-remaining'], '1')
  t.equal((await app.inject({ method: 'GET', url: '/people', headers: { 'x-api-key': keys[1]!['x-api-key'] } })).statusCode, 200)
  for (const key of keys) {
    const refused = await app.inject({ method: 'GET', url: '/people', headers: { 'x-api-key': key['x-api-key'] } })
    t.equal(refused.statusCode, 429, 'a fresh key brings no fresh budget')
    t.match(refused.json(), { code: 'RATE_LIMITED', message: /the account of this API key/ })
    t.ok(Number(refused.headers['retry-after']) > 0)
  }
  t.equal((await app.inject({ method: 'GET', url: '/people', headers: editor })).statusCode, 429, 'nor does the account\'s own token')
})

t.test('the RateLimit headers show the budget closer to running out, the key\'s or its account\'s', async (t) => {
  const { app, admin } = await build(t, { access: { limits: { max: 10, windowMs: 60_000 } } })
  const small = await apiKeyOf(app, admin, { rateLimit: 3 })
  const response = await app.inject({ method: 'GET', url: '/people', headers: { 'x-api-key': small['x-api-key'] } })
  t.equal(response.headers['ratelimit-limit'], '3', 'the key\'s own, smaller budget')
  t.equal(response.headers['ratelimit-remaining'], '2')
  const large = await apiKeyOf(app, admin, { rateLimit: 1000 })
  for (let i = 0; i < 4; i++) await app.inject({ method: 'GET', url: '/people', headers: admin })
  // Spent: two key creations, one through the small key, four by the token.
  const through = await app.inject({ method: 'GET', url: '/people', headers: { 'x-api-key': large['x-api-key'] } })
  t.equal(through.statusCode, 200)
  t.equal(through.headers['ratelimit-limit'], '10', 'the account\'s, nearly spent')
  t.equal(through.headers['ratelimit-remaining'], '2')
})

t.test('successful logins are not counted as failures: a busy office behind one address never locks itself out', async (t) => {
  const { app } = await build(t, { access: { limits: { loginMax: 2, loginWindowMs: 60_000 } } })
  const people = ['ada', 'grace', 'edsger', 'barbara', 'alan', 'margaret', 'donald', 'frances', 'john', 'radia', 'ken', 'dennis']
  for (const username of people) await app.access.useCases.createAccount(SETUP_ACTOR, { username, password: PASSWORD, role: 'viewer' })
  const statuses: number[] = []
  for (let round = 0; round < 2; round++) {
    for (const username of people) {
      statuses.push((await app.inject({ method: 'POST', url: '/auth/login', payload: { username, password: PASSWORD } })).statusCode)
    }
  }
  t.same(statuses, Array<number>(people.length * 2).fill(200), `${people.length * 2} logins from one address, twice the address budget of failures`)
  const failures = []
  for (let i = 0; i < 3; i++) failures.push((await app.inject({ method: 'POST', url: '/auth/login', payload: { username: 'ada', password: 'wrong password' } })).statusCode)
  t.same(failures, [401, 401, 429], 'failures still count')
})

t.test('every password check is paid for by its username: one account logging in over and over is refused before its password is checked', async (t) => {
  let verifications = 0
  const hasher = fastPasswordHasher()
  const counting: PasswordHasher = { ...hasher, decoyHash: hasher.decoyHash, verify: async (password, hash) => { verifications++; return hasher.verify(password, hash) } }
  // loginMax 2: 2 failures, and 5 × 2 = 10 checks, per username per window.
  const { app } = await build(t, { ports: createInMemoryPorts({ passwords: counting }), access: { limits: { loginMax: 2, loginWindowMs: 60_000 } } })
  for (const username of ['ada', 'grace']) await app.access.useCases.createAccount(SETUP_ACTOR, { username, password: PASSWORD, role: 'viewer' })
  const attempt = (username: string, password = PASSWORD) => app.inject({ method: 'POST', url: '/auth/login', payload: { username, password } })
  verifications = 0
  t.equal((await attempt('ada', 'a wrong one')).statusCode, 401, 'a failure is a check too')
  const logins = []
  for (let i = 0; i < 12; i++) logins.push(await attempt('ada'))
  t.same(logins.map((response) => response.statusCode), [...Array<number>(9).fill(200), 429, 429, 429])
  t.equal(verifications, 10, 'the three refused never reached the password check')
  const refused = logins[9]!
  t.equal(refused.json().code, 'RATE_LIMITED')
  t.match(refused.json().message, /too many logins for this username: 10 requests per 60 s/)
  t.ok(Number(refused.headers['retry-after']) > 0, 'with Retry-After')
  t.equal((await attempt('ada')).statusCode, 429, 'the right password waits for the window')
  t.equal(verifications, 10)
  t.equal((await attempt('grace')).statusCode, 200, 'another username from the same address logs in')
})

t.test('every response to a caller carries the budget headers, errors included', async (t) => {
  const { app, as } = await build(t, { access: { limits: { max: 50 } } })
  const viewer = await as('viewer')
  const responses = {
    ok: await app.inject({ method: 'GET', url: '/people', headers: viewer }),
    'not found': await app.inject({ method: 'GET', url: '/person/nobody', headers: viewer }),
    'unknown route': await app.inject({ method: 'GET', url: '/nowhere', headers: viewer }),
    forbidden: await app.inject({ method: 'POST', url: '/person', headers: viewer, payload: { name: 'x' } }),
    'bad query': await app.inject({ method: 'GET', url: '/people?limit=0', headers: viewer }),
    'method not allowed': await app.inject({ method: 'DELETE', url: '/people', headers: viewer })
  }
  for (const [name, response] of Object.entries(responses)) {
    t.ok(response.headers['ratelimit-limit'] && response.headers['ratelimit-remaining'] && response.headers['ratelimit-reset'], `${name} (${response.statusCode})`)
  }
  const anonymous = await app.inject({ method: 'GET', url: '/people' })
  t.equal(anonymous.headers['ratelimit-limit'], undefined, 'no caller, no budget')
})

t.test('RATE_LIMIT_MAX=0 switches per-caller limits off', async (t) => {
  const { app, admin } = await build(t, { access: { limits: { max: 0 } } })
  const key = await apiKeyOf(app, admin, { rateLimit: 1 })
  for (let i = 0; i < 5; i++) {
    const response = await app.inject({ method: 'GET', url: '/people', headers: { 'x-api-key': key['x-api-key'] } })
    t.equal(response.statusCode, 200)
    t.equal(response.headers['ratelimit-limit'], undefined)
  }
})

t.test('login guessing hits 429 per address and username, before any password is checked', async (t) => {
  let verifications = 0
  const hasher = fastPasswordHasher()
  const counting: PasswordHasher = { ...hasher, decoyHash: hasher.decoyHash, verify: async (password, hash) => { verifications++; return hasher.verify(password, hash) } }
  const { app } = await build(t, { ports: createInMemoryPorts({ passwords: counting }), access: { limits: { loginMax: 3, loginWindowMs: 60_000 } } })
  await app.access.useCases.createAccount(SETUP_ACTOR, { username: 'ada', password: PASSWORD, role: 'viewer' })
  const attempt = (username: string, password: string) => app.inject({ method: 'POST', url: '/auth/login', payload: { username, password } })
  verifications = 0
  for (let i = 0; i < 3; i++) t.equal((await attempt('ada', `guess ${i}`)).statusCode, 401)
  const blocked = await attempt('ada', PASSWORD)
  t.equal(blocked.statusCode, 429, 'even the right password waits once the budget is spent')
  t.equal(blocked.json().code, 'RATE_LIMITED')
  t.match(blocked.json().message, /too many failed logins for this username/)
  t.ok(Number(blocked.headers['retry-after']) > 0)
  t.equal(verifications, 3, 'the blocked attempt never reached the password check')
  t.equal((await attempt('grace', 'whatever')).statusCode, 401, 'other usernames from the address still get answers')

  // The address as a whole: 5 × 3 = 15 failed attempts across any
  // usernames. Four failed so far (ada three times, grace once); the
  // helper's admin login succeeded and the blocked one was never tried.
  const statuses: number[] = []
  for (let i = 0; i < 12; i++) statuses.push((await attempt(`spray-${i}`, 'password1')).statusCode)
  t.same(statuses, [...Array<number>(11).fill(401), 429], 'spraying many usernames from one address is refused after 15 failures')
})

t.test('a burst of parallel guesses gets no more password checks than the budget of failures', async (t) => {
  let verifications = 0
  const hasher = fastPasswordHasher()
  const counting: PasswordHasher = { ...hasher, decoyHash: hasher.decoyHash, verify: async (password, hash) => { verifications++; return hasher.verify(password, hash) } }
  const { app } = await build(t, { ports: createInMemoryPorts({ passwords: counting }), access: { limits: { loginMax: 3, loginWindowMs: 60_000 } } })
  await app.access.useCases.createAccount(SETUP_ACTOR, { username: 'ada', password: PASSWORD, role: 'viewer' })
  verifications = 0
  const burst = await Promise.all(Array.from({ length: 20 }, (_, i) =>
    app.inject({ method: 'POST', url: '/auth/login', payload: { username: 'ada', password: `guess ${i}` } })))
  // The login limit admits 3; the hashing queue may refuse some of those
  // at once too (2 hashes at a time per username).
  const checked = burst.filter((response) => response.statusCode === 401).length
  t.ok(checked >= 1 && checked <= 3, `${checked} guesses were checked`)
  t.equal(burst.filter((response) => response.statusCode === 429).length, 20 - checked, 'the rest were refused')
  t.equal(verifications, checked, 'the refused never reached the password check')
  t.equal((await app.inject({ method: 'POST', url: '/auth/login', payload: { username: 'ada', password: PASSWORD } })).statusCode, 429, 'the budget is spent')
})

t.test('a login refused while another attempt still runs is told to retry in a second; one refused for failures, when the window ends', async (t) => {
  // The next password check once `holding` is set waits until the test lets it go on.
  let holding = false
  let checking = (): void => {}
  let release = (): void => {}
  const checked = new Promise<void>((resolve) => { checking = resolve })
  const held = new Promise<void>((resolve) => { release = resolve })
  const hasher = fastPasswordHasher()
  const passwords: PasswordHasher = {
    ...hasher,
    decoyHash: hasher.decoyHash,
    verify: async (password, hash) => {
      if (holding) {
        holding = false
        checking()
        await held
      }
      return hasher.verify(password, hash)
    }
  }
  const { app } = await build(t, { ports: createInMemoryPorts({ passwords }), access: { limits: { loginMax: 1, loginWindowMs: 60_000 } } })
  await app.access.useCases.createAccount(SETUP_ACTOR, { username: 'ada', password: PASSWORD, role: 'viewer' })
  const attempt = async (password: string) => app.inject({ method: 'POST', url: '/auth/login', payload: { username: 'ada', password } })

  holding = true
  const running = attempt(PASSWORD)
  await checked
  const meanwhile = await attempt(PASSWORD)
  t.same([meanwhile.statusCode, meanwhile.headers['retry-after']], [429, '1'], 'the one place is held by an attempt that ends within a second')
  release()
  t.equal((await running).statusCode, 200)
  t.equal((await attempt('a wrong guess')).statusCode, 401)
  const spent = await attempt(PASSWORD)
  t.same([spent.statusCode, spent.headers['retry-after']], [429, '60'], 'a failure spent the budget: it comes back with the window')
})

t.test('behind a trusted proxy the login limit counts by the client, never by an address the client names', async (t) => {
  const limits = { loginMax: 1, loginWindowMs: 60_000 }
  const fromProxy = (app: Awaited<ReturnType<typeof build>>['app'], client: string, username: string) => app.inject({
    method: 'POST', url: '/auth/login', payload: { username, password: 'wrong password' }, remoteAddress: '10.0.0.2', headers: { 'x-forwarded-for': client }
  })
  // One failure per username: what runs out is the address's budget, 5 × 1.
  const spray = async (app: Awaited<ReturnType<typeof build>>['app'], client: string, from: number, count: number) => {
    const statuses: number[] = []
    for (let i = from; i < from + count; i++) statuses.push((await fromProxy(app, client, `user-${i}`)).statusCode)
    return statuses
  }
  const proxied = (await build(t, { trustProxy: ['10.0.0.0/8'], access: { limits } })).app
  t.same(await spray(proxied, '203.0.113.7', 0, 6), [401, 401, 401, 401, 401, 429], 'one client spent its address\'s budget')
  t.same(await spray(proxied, '198.51.100.9', 10, 1), [401], 'another client behind the same proxy still gets answers')

  const direct = (await build(t, { access: { limits } })).app
  t.same(await spray(direct, '203.0.113.7', 0, 5), [401, 401, 401, 401, 401])
  t.same(await spray(direct, '198.51.100.9', 10, 1), [429], 'without a trusted proxy, X-Forwarded-For buys no fresh budget')
})

t.test('an IPv6 client buys no fresh login budget by moving to another address of its /56', async (t) => {
  const { app } = await build(t, { access: { limits: { loginMax: 1, loginWindowMs: 60_000 } } })
  // One failure per username: the address budget, 5 × 1, runs out; each attempt from a new address of one /56.
  const attempt = (i: number, remoteAddress: string) =>
    app.inject({ method: 'POST', url: '/auth/login', payload: { username: `user-${i}`, password: 'wrong password' }, remoteAddress })
  const statuses: number[] = []
  for (let i = 0; i < 6; i++) statuses.push((await attempt(i, `2001:db8:1:2${i}::${i + 1}`)).statusCode)
  t.same(statuses, [401, 401, 401, 401, 401, 429])
  t.equal((await attempt(10, '2001:db8:1:300::1')).statusCode, 401, 'the next /56 is another client')
  t.equal((await attempt(11, '::ffff:203.0.113.7')).statusCode, 401, 'and an IPv4 client too')
})

t.test('guessing one username from many addresses is limited per username; other usernames still get answers', async (t) => {
  const { app } = await build(t, { access: { limits: { loginMax: 3, loginWindowMs: 60_000 } } })
  await app.access.useCases.createAccount(SETUP_ACTOR, { username: 'ada', password: PASSWORD, role: 'viewer' })
  const attempt = (username: string, password: string, remoteAddress: string) =>
    app.inject({ method: 'POST', url: '/auth/login', payload: { username, password }, remoteAddress })
  const statuses: number[] = []
  for (let i = 1; i <= 5; i++) statuses.push((await attempt('ada', `guess ${i}`, `198.51.100.${i}`)).statusCode)
  t.same(statuses, [401, 401, 401, 429, 429], 'a fresh address buys no fresh guesses at the same username')
  const blocked = await attempt('ada', PASSWORD, '198.51.100.99')
  t.equal(blocked.statusCode, 429, 'not even the right password, until the window ends')
  t.match(blocked.json().message, /too many failed logins for this username/)
  t.equal((await attempt('grace', 'whatever', '198.51.100.1')).statusCode, 401, 'another username from a guessing address is still answered')
})

t.test('a charge of several units is paid whole, or refused with 429 before the budget goes below zero, charging nothing', async (t) => {
  const { app } = await build(t, { access: { limits: { max: 10, windowMs: 60_000 } }, extend: weightedRoutes })
  const viewer = await loginAs(app, 'viewer')
  const charge = (units: number) => app.inject({ method: 'GET', url: `/weighted/${units}`, headers: viewer })
  t.equal(budgetOf(await charge(4)), '200 10/6')
  t.equal(budgetOf(await charge(4)), '200 10/2')
  const refused = await charge(3)
  t.equal(budgetOf(refused), '429 10/2', 'refused: the two left are shown, not a negative count')
  t.match(refused.json(), { statusCode: 429, code: 'RATE_LIMITED', message: /10 requests per 60 s; this costs 3 and 2 are left; retry in \d+ s/ })
  const retryAfter = Number(refused.headers['retry-after'])
  t.ok(retryAfter > 0 && retryAfter <= 60, `Retry-After ${retryAfter}`)
  t.equal(refused.headers['ratelimit-reset'], refused.headers['retry-after'])
  t.equal(budgetOf(await charge(2)), '200 10/0', 'the refused charge took nothing: two were still there')
  t.equal(budgetOf(await charge(1)), '429 10/0')
  t.equal((await app.inject({ method: 'GET', url: '/people', headers: viewer })).statusCode, 429, 'a plain request finds the budget spent too')
})

t.test('a charge larger than the whole budget is refused as such and charges nothing', async (t) => {
  const { app } = await build(t, { access: { limits: { max: 10 } }, extend: weightedRoutes })
  const viewer = await loginAs(app, 'viewer')
  const refused = await app.inject({ method: 'GET', url: '/weighted/11', headers: viewer })
  t.equal(budgetOf(refused), '429 10/10')
  t.match(refused.json().message, /this costs 11, more than the whole budget/)
  t.equal(budgetOf(await app.inject({ method: 'GET', url: '/weighted/10', headers: viewer })), '200 10/0')
})

t.test('through a key, units are charged to the key and its account together, or to neither', async (t) => {
  const { app, admin } = await build(t, { access: { limits: { max: 20 } }, extend: weightedRoutes })
  const editor = await loginAs(app, 'editor')
  const key = { 'x-api-key': (await apiKeyOf(app, editor, { rateLimit: 6 }))['x-api-key'] }
  const throughKey = (units: number) => app.inject({ method: 'GET', url: `/weighted/${units}`, headers: key })
  const asAccount = (units: number) => app.inject({ method: 'GET', url: `/weighted/${units}`, headers: editor })
  // The account spent one on making the key.
  t.equal(budgetOf(await throughKey(4)), '200 6/2', 'the key\'s budget is the tighter one')
  const keyRefused = await throughKey(3)
  t.equal(budgetOf(keyRefused), '429 6/2')
  t.match(keyRefused.json().message, /rate limit exceeded for this API key/)
  t.equal(budgetOf(await asAccount(1)), '200 20/14', 'the account paid for the key\'s four, not for the refused three')
  t.equal(budgetOf(await asAccount(13)), '200 20/1')
  const accountRefused = await throughKey(2)
  t.equal(budgetOf(accountRefused), '429 20/1', 'the key could pay, its account could not')
  t.match(accountRefused.json().message, /the account of this API key/)
  t.equal(budgetOf(await throughKey(1)), '200 20/0', 'the key still had its two: the refused charge took none of them')
  t.equal(budgetOf(await throughKey(1)), '429 20/0')
  t.equal((await app.inject({ method: 'GET', url: '/people', headers: admin })).statusCode, 200, 'other accounts are unaffected')
})

t.test('parallel charges never spend more than the budget', async (t) => {
  const { app } = await build(t, { access: { limits: { max: 20 } }, extend: weightedRoutes })
  const viewer = await loginAs(app, 'viewer')
  const responses = await Promise.all(Array.from({ length: 10 }, () => app.inject({ method: 'GET', url: '/weighted/3', headers: viewer })))
  t.same(responses.map((response) => response.statusCode).sort(), [...Array<number>(6).fill(200), ...Array<number>(4).fill(429)])
  t.same(responses.filter((response) => response.statusCode === 200).map((response) => response.headers['ratelimit-remaining']).sort(), ['11', '14', '17', '2', '5', '8'])
  t.equal(budgetOf(await app.inject({ method: 'GET', url: '/weighted/2', headers: viewer })), '200 20/0')
})

t.test('the budget comes back whole when its window ends', async (t) => {
  const { app } = await build(t, { access: { limits: { max: 5, windowMs: 400 } }, extend: weightedRoutes })
  const viewer = await loginAs(app, 'viewer')
  t.equal(budgetOf(await app.inject({ method: 'GET', url: '/weighted/5', headers: viewer })), '200 5/0')
  t.equal((await app.inject({ method: 'GET', url: '/weighted/1', headers: viewer })).statusCode, 429)
  await new Promise((resolve) => setTimeout(resolve, 450))
  t.equal(budgetOf(await app.inject({ method: 'GET', url: '/weighted/3', headers: viewer })), '200 5/2', 'a new window, from this charge on')
})

t.test('access.charge (the WebSocket adapter\'s) counts the key\'s usage once and charges its units', async (t) => {
  const { app, admin } = await build(t, { access: { limits: { max: 10 } }, extend: weightedRoutes })
  const key = await apiKeyOf(app, admin, { rateLimit: 8 })
  const charge = (units: number) => app.inject({ method: 'GET', url: `/weighted-socket/${units}`, headers: { 'x-api-key': key['x-api-key'] } })
  t.equal((await charge(5)).statusCode, 200)
  const refused = await charge(4)
  t.equal(refused.statusCode, 429)
  t.equal(refused.headers['ratelimit-limit'], undefined, 'no reply to put headers on')
  t.equal(budgetOf(await app.inject({ method: 'GET', url: '/weighted/3', headers: { 'x-api-key': key['x-api-key'] } })), '200 8/0', 'the key paid five, then three')
  const usage = await app.inject({ method: 'GET', url: `/api-keys/${key.id}/usage`, headers: admin })
  t.equal(usage.json().total, 2, 'two requests through the key, whatever they cost (the refused one included)')
})
