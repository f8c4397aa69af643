import { SETUP_ACTOR } from '@people-service/domain/testing'
import { createHmac } from 'node:crypto'
import t from 'tap'
import { kidOf, TOKEN_DEFAULTS } from '@people-service/http'
import { build, PASSWORD, TEST_JWT_SECRET } from './helper.js'

const b64 = (value: object | string): string => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')

type Alg = 'HS256' | 'HS384' | 'HS512'
const hmac = (alg: Alg, secret: string, input: string): string =>
  createHmac(`sha${alg.slice(2)}`, secret).update(input).digest('base64url')

/** A JWT made by hand, so every field can be wrong on purpose. */
const jwt = (header: Record<string, unknown>, payload: Record<string, unknown>, sign: (input: string) => string): string => {
  const input = `${b64(header)}.${b64(payload)}`
  return `${input}.${sign(input)}`
}

const now = () => Math.floor(Date.now() / 1000)

t.test('the token matrix: everything but a valid, pinned HS256 token is 401, never 500', async (t) => {
  const { app, admin: adminHeaders } = await build(t)
  const { id: sub } = await app.access.useCases.createAccount(SETUP_ACTOR, { username: 'ada', password: PASSWORD, role: 'editor' })
  const admin = (await app.access.authenticate({ authorization: adminHeaders.authorization })).id
  const kid = kidOf(TEST_JWT_SECRET)
  const header = { alg: 'HS256', typ: 'JWT', kid }
  const claims = { sub, tv: 0, iss: TOKEN_DEFAULTS.issuer, aud: TOKEN_DEFAULTS.audience, iat: now(), exp: now() + 600 }
  const signed = (h: Record<string, unknown>, p: Record<string, unknown>, alg: Alg = 'HS256', secret = TEST_JWT_SECRET) =>
    jwt(h, p, (input) => hmac(alg, secret, input))
  const without = (key: string) => Object.fromEntries(Object.entries(claims).filter(([k]) => k !== key))

  const good = signed(header, claims)
  const ok = await app.inject({ method: 'GET', url: '/people', headers: { authorization: `Bearer ${good}` } })
  t.equal(ok.statusCode, 200, 'a hand-made valid token is accepted (so the cases below fail for their one defect)')

  const [goodHeader, goodPayload, goodSignature] = good.split('.')
  const cases: Record<string, string> = {
    'alg none, no signature': `${b64({ alg: 'none', typ: 'JWT', kid })}.${goodPayload}.`,
    'alg none, signature kept': `${b64({ alg: 'none', typ: 'JWT', kid })}.${goodPayload}.${goodSignature}`,
    'alg NONE': `${b64({ alg: 'NONE', kid })}.${goodPayload}.`,
    'HS512 with the right secret': signed({ ...header, alg: 'HS512' }, claims, 'HS512'),
    'HS384 with the right secret': signed({ ...header, alg: 'HS384' }, claims, 'HS384'),
    'RS256 header over an HMAC': signed({ ...header, alg: 'RS256' }, claims),
    'wrong secret': signed(header, claims, 'HS256', 'another-secret-that-is-long-enough-to-pass'),
    'tampered payload (another account)': `${goodHeader}.${b64({ ...claims, sub: admin })}.${goodSignature}`,
    'tampered signature': `${goodHeader}.${goodPayload}.${goodSignature!.slice(0, -2)}AA`,
    'no signature': `${goodHeader}.${goodPayload}.`,
    expired: signed(header, { ...claims, iat: now() - 1000, exp: now() - 1 }),
    'no exp': signed(header, without('exp')),
    'exp not a number': signed(header, { ...claims, exp: 'tomorrow' }),
    'not yet valid (nbf)': signed(header, { ...claims, nbf: now() + 600 }),
    'no sub': signed(header, without('sub')),
    'sub not a string': signed(header, { ...claims, sub: 42 }),
    'empty sub': signed(header, { ...claims, sub: '' }),
    'no token version': signed(header, without('tv')),
    'token version not an integer': signed(header, { ...claims, tv: '0' }),
    'an older token version': signed(header, { ...claims, tv: -1 }),
    'a token version not yet reached': signed(header, { ...claims, tv: 1 }),
    'an account that does not exist': signed(header, { ...claims, sub: '00000000-0000-7000-8000-000000000000' }),
    'wrong issuer': signed(header, { ...claims, iss: 'someone-else' }),
    'no issuer': signed(header, without('iss')),
    'wrong audience': signed(header, { ...claims, aud: 'another-service' }),
    'audience list without ours': signed(header, { ...claims, aud: ['a', 'b'] }),
    'no audience': signed(header, without('aud')),
    'no kid': signed({ alg: 'HS256', typ: 'JWT' }, claims),
    'unknown kid': signed({ ...header, kid: 'not-a-known-kid' }, claims),
    'payload not JSON': `${goodHeader}.${b64('not json')}.${hmac('HS256', TEST_JWT_SECRET, `${goodHeader}.${b64('not json')}`)}`,
    'payload a JSON string': signed(header, 'x' as unknown as Record<string, unknown>),
    'header not JSON': `${b64('{')}.${goodPayload}.${goodSignature}`,
    'two parts': `${goodHeader}.${goodPayload}`,
    'four parts': `${good}.extra`,
    garbage: 'not-a-token',
    'dots only': '..',
    huge: 'a'.repeat(10_000)
  }
  for (const [name, token] of Object.entries(cases)) {
    const response = await app.inject({ method: 'GET', url: '/people', headers: { authorization: `Bearer ${token}` } })
    t.equal(response.statusCode, 401, name)
    t.match(response.json(), { statusCode: 401, error: 'Unauthorized', code: 'UNAUTHENTICATED' }, name)
    t.equal(response.headers['www-authenticate'], 'Bearer realm="people-service"', name)
  }

  const headers: Record<string, Record<string, string>> = {
    'Basic scheme': { authorization: 'Basic YWRhOnBhc3N3b3Jk' },
    'Bearer without a token': { authorization: 'Bearer' },
    'Bearer with two tokens': { authorization: `Bearer ${good} ${good}` },
    'token without a scheme': { authorization: good },
    'both a token and a key': { authorization: `Bearer ${good}`, 'x-api-key': 'ps_whatever' },
    'empty API key': { 'x-api-key': '' },
    'malformed API key': { 'x-api-key': 'not-a-key' },
    'well-formed unknown API key': { 'x-api-key': `ps_${'A'.repeat(54)}` }
  }
  for (const [name, given] of Object.entries(headers)) {
    const response = await app.inject({ method: 'GET', url: '/people', headers: given })
    t.equal(response.statusCode, 401, name)
    t.equal(response.json().code, 'UNAUTHENTICATED', name)
  }
  t.equal((await app.inject({ method: 'GET', url: '/people', headers: { authorization: `bearer ${good}` } })).statusCode, 200, 'the scheme is case-insensitive')
})

t.test('rotation: tokens of the previous secret are accepted by kid during the grace period, and only then', async (t) => {
  const oldSecret = 'the-old-secret-that-was-in-use-until-today'
  const newSecret = 'the-new-secret-that-signs-every-new-token!'
  const during = await build(t, { access: { tokens: { secret: newSecret, previousSecret: oldSecret } } })
  const someone = await during.app.access.useCases.createAccount(SETUP_ACTOR, { username: 'someone', password: PASSWORD, role: 'viewer' })
  const claims = { sub: someone.id, tv: 0, iss: TOKEN_DEFAULTS.issuer, aud: TOKEN_DEFAULTS.audience, exp: now() + 600 }
  const oldToken = jwt({ alg: 'HS256', kid: kidOf(oldSecret) }, claims, (input) => hmac('HS256', oldSecret, input))
  const oldSecretNewKid = jwt({ alg: 'HS256', kid: kidOf(newSecret) }, claims, (input) => hmac('HS256', oldSecret, input))
  const get = async (app: Awaited<ReturnType<typeof build>>['app'], token: string) =>
    (await app.inject({ method: 'GET', url: '/people', headers: { authorization: `Bearer ${token}` } })).statusCode

  t.equal(await get(during.app, oldToken), 200, 'an old token still works during the grace period')
  t.equal(await get(during.app, oldSecretNewKid), 401, 'the kid must name the secret that signed it')
  const issued = during.app.access.tokens.issue({ id: someone.id, tokenVersion: 0 })
  t.equal(JSON.parse(Buffer.from(issued.split('.')[0]!, 'base64url').toString()).kid, kidOf(newSecret), 'new tokens are signed with the new secret')

  const after = await build(t, { ports: during.ports, access: { tokens: { secret: newSecret } } })
  t.equal(await get(after.app, oldToken), 401, 'once the previous secret is removed, its tokens are refused')
  t.equal(await get(after.app, issued), 200)
})

t.test('issued tokens carry only what verification needs', async (t) => {
  const { app, admin } = await build(t)
  const [header, payload] = admin.authorization!.slice('Bearer '.length).split('.').slice(0, 2).map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()))
  t.same(header, { alg: 'HS256', typ: 'JWT', kid: kidOf(TEST_JWT_SECRET) })
  t.same(Object.keys(payload).sort(), ['aud', 'exp', 'iat', 'iss', 'sub', 'tv'])
  t.equal(payload.exp - payload.iat, TOKEN_DEFAULTS.ttlSeconds)
  t.equal((await app.inject({ method: 'GET', url: '/people', headers: admin })).statusCode, 200)
})

t.test('a token checked a moment ago is refused once it expires: verified tokens are remembered only until their exp', async (t) => {
  const { app } = await build(t)
  const { id: sub } = await app.access.useCases.createAccount(SETUP_ACTOR, { username: 'brief', password: PASSWORD, role: 'viewer' })
  const exp = now() + 2
  const token = jwt({ alg: 'HS256', typ: 'JWT', kid: kidOf(TEST_JWT_SECRET) }, { sub, tv: 0, iss: TOKEN_DEFAULTS.issuer, aud: TOKEN_DEFAULTS.audience, exp },
    (input) => hmac('HS256', TEST_JWT_SECRET, input))
  const get = async () => (await app.inject({ method: 'GET', url: '/people', headers: { authorization: `Bearer ${token}` } })).statusCode
  for (let i = 0; i < 3; i++) t.equal(await get(), 200, 'valid, and verified from memory after the first request')
  await new Promise((resolve) => setTimeout(resolve, exp * 1000 - Date.now() + 50))
  t.equal(await get(), 401, 'expired: refused on the next request')
  await t.rejects(app.access.authenticate({ authorization: `Bearer ${token}` }), { code: 'UNAUTHENTICATED' }, 'and by the authenticator WebSockets use')
})
