import t from 'tap'
import { apiKeyOf, build, PASSWORD } from './helper.js'

/*
 * Text as Unicode has it: one username, password or name however it was
 * typed (composed, decomposed, full-width, any case), and no name that
 * hides what it says (controls, bidirectional overrides, nothing visible).
 * In memory; the suite under sqlite/ runs it over a real file.
 */

const createAccount = (app: Awaited<ReturnType<typeof build>>['app'], admin: Record<string, string>, username: string, password = PASSWORD) =>
  app.inject({ method: 'POST', url: '/users', headers: admin, payload: { username, password, role: 'viewer' } })

const logIn = (app: Awaited<ReturnType<typeof build>>['app'], username: string, password: string) =>
  app.inject({ method: 'POST', url: '/auth/login', payload: { username, password } })

t.test('usernames are unique without regard to case or width, and log in however they are typed', async (t) => {
  const { app, admin } = await build(t)
  t.equal((await createAccount(app, admin, 'zoe')).statusCode, 201)
  for (const same of ['Zoe', 'ZOE', 'ｚｏｅ', 'Ｚｏｅ']) {
    const response = await createAccount(app, admin, same)
    t.equal(response.statusCode, 409, JSON.stringify(same))
    t.match(response.json(), { code: 'USERNAME_TAKEN' })
  }
  t.equal((await logIn(app, 'ZOE', PASSWORD)).statusCode, 200, 'any case finds the account')
  t.equal((await logIn(app, 'ｚｏｅ', PASSWORD)).statusCode, 200, 'full-width finds it too')
  const created = await createAccount(app, admin, 'ｍａｘ')
  t.equal(created.statusCode, 201, 'a full-width username is taken in its NFKC form')
  t.equal(created.json().username, 'max')
  t.equal((await createAccount(app, admin, 'zoë')).statusCode, 400, 'letters beyond ASCII stay refused')
})

t.test('passwords are NFKC-normalized first, then 15 to 1,024 characters not all white space', async (t) => {
  const { app, admin } = await build(t)
  const refused = {
    'sixteen code points, eight characters composed': 'e\u0301'.repeat(8),
    'fifteen spaces': ' '.repeat(15),
    'fifteen ideographic spaces and tabs': '\u3000\t'.repeat(8),
    'fourteen characters': 'x'.repeat(14),
    '1,025 characters once normalized': 'ﬃ'.repeat(342)
  }
  for (const [label, password] of Object.entries(refused)) {
    const response = await createAccount(app, admin, `user-${label.length}`, password)
    t.equal(response.statusCode, 400, label)
    t.match(response.json(), { message: /password/ }, label)
  }
  const ligatures = 'ﬃ'.repeat(5)
  t.equal((await createAccount(app, admin, 'ligature', ligatures)).statusCode, 201, 'five ligatures are fifteen letters once normalized')
  t.equal((await logIn(app, 'ligature', 'ffi'.repeat(5))).statusCode, 200, 'and the same password typed as letters')
  t.equal((await createAccount(app, admin, 'accents', 'cafe\u0301 cafe\u0301 cafe\u0301!')).statusCode, 201)
  t.equal((await logIn(app, 'accents', 'café café café!')).statusCode, 200, 'composed or decomposed, one password')
  const viewer = (await logIn(app, 'accents', 'café café café!')).json<{ access_token: string }>()
  const changed = await app.inject({ method: 'POST', url: '/auth/password', headers: { authorization: `Bearer ${viewer.access_token}` }, payload: { currentPassword: 'cafe\u0301 cafe\u0301 cafe\u0301!', newPassword: ' '.repeat(20) } })
  t.equal(changed.statusCode, 400, 'a new password of spaces is refused')
})

const BAD_NAMES: Record<string, string> = {
  'U+0001': 'Ada\u0001',
  'an ANSI escape': '\u001b[31mAda',
  'U+202E (right-to-left override)': 'Ada\u202Efdp.exe',
  'U+2066 (left-to-right isolate)': '\u2066Ada',
  'only spaces': '   ',
  'only a zero-width space': '\u200B',
  'only a combining mark': '\u0301'
}

t.test('names are NFC without controls, bidirectional overrides or nothing visible: people and API keys alike', async (t) => {
  const { app, admin } = await build(t)
  for (const [label, name] of Object.entries(BAD_NAMES)) {
    const person = await app.inject({ method: 'POST', url: '/person', headers: admin, payload: { name } })
    t.equal(person.statusCode, 400, `person: ${label}`)
    t.match(person.json(), { message: /^name / }, label)
    t.equal((await app.inject({ method: 'POST', url: '/api-keys', headers: admin, payload: { name } })).statusCode, 400, `key: ${label}`)
  }
  const ada = (await app.inject({ method: 'POST', url: '/person', headers: admin, payload: { name: 'Ada' } })).json<{ id: string }>()
  t.equal((await app.inject({ method: 'PATCH', url: `/person/${ada.id}`, headers: admin, payload: { name: 'Ada\u202E' } })).statusCode, 400, 'an update too')
  const graphql = await app.inject({ method: 'POST', url: '/graphql', headers: admin, payload: { query: 'mutation { createPerson(input: { name: "Ada\\u0001" }) { id } }' } })
  t.match(graphql.json(), { errors: [{ extensions: { code: 'VALIDATION_FAILED' } }] }, 'GraphQL refuses it as REST does')
  const key = await app.inject({ method: 'POST', url: '/api-keys', headers: admin, payload: { name: 'Zoe\u0308' } })
  t.equal(key.json().name, 'Zoë', 'a key name is stored NFC')
  t.equal((await app.inject({ method: 'POST', url: '/person', headers: admin, payload: { name: 'Ada Lovelace, née Byron\tthe first' } })).statusCode, 400, 'a tab is a control in a name')
})

t.test('message text refuses controls but newline and tab', async (t) => {
  const { app, admin } = await build(t)
  const ada = (await app.inject({ method: 'POST', url: '/person', headers: admin, payload: { name: 'Ada' } })).json<{ id: string }>()
  for (const text of ['\u0001'.repeat(10), 'red \u001b[31malert', 'bell\u0007']) {
    const response = await app.inject({ method: 'POST', url: '/message', headers: admin, payload: { personId: ada.id, text } })
    t.equal(response.statusCode, 400, JSON.stringify(text))
    t.match(response.json(), { message: /^text must not contain control characters other than newline and tab/ })
  }
  t.equal((await app.inject({ method: 'POST', url: '/message', headers: admin, payload: { personId: ada.id, text: 'line one\nline two\tand a tab' } })).statusCode, 201)
})

t.test('a name typed decomposed is stored NFC and found by a needle typed either way', async (t) => {
  const { app, admin } = await build(t)
  const created = await app.inject({ method: 'POST', url: '/person', headers: admin, payload: { name: 'Zoe\u0308 Dupont' } })
  t.equal(created.statusCode, 201)
  t.equal(created.json().name, 'Zoë Dupont', 'stored and answered NFC')
  for (const needle of ['zoë', 'zoe\u0308', 'ZOË']) {
    const found = await app.inject({ method: 'GET', url: `/people?name=${encodeURIComponent(needle)}`, headers: admin })
    t.same(found.json<Array<{ name: string }>>().map((p) => p.name), ['Zoë Dupont'], JSON.stringify(needle))
  }
  const graphql = await app.inject({ method: 'POST', url: '/graphql', headers: admin, payload: { query: '{ people(name: "zoe\\u0308") { name } }' } })
  t.same(graphql.json().data.people, [{ name: 'Zoë Dupont' }], 'GraphQL normalizes its needle too')
  await apiKeyOf(app, admin)
})
