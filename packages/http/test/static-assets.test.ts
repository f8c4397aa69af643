import { request as httpRequest } from 'node:http'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import t from 'tap'
import { realServer } from './helper.js'

/*
 * The documents and the pages' files, through a real server on a real port,
 * read as bytes (no client-side decompression): compressed as
 * Accept-Encoding allows, with a strong ETag per representation,
 * `Vary: Accept-Encoding`, 304 for the one held, `Cache-Control: public`;
 * and every public page counted against PUBLIC_RATE_LIMIT_MAX.
 */

interface Raw { status: number, headers: Record<string, string | string[] | undefined>, body: Buffer }

const get = async (base: string, path: string, headers: Record<string, string> = {}): Promise<Raw> =>
  new Promise((resolve, reject) => {
    httpRequest(new URL(path, base), { headers }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }))
      response.on('error', reject)
    }).on('error', reject).end()
  })

const decoded = (raw: Raw): Buffer => {
  const coding = raw.headers['content-encoding']
  if (coding === 'br') return brotliDecompressSync(raw.body)
  if (coding === 'gzip') return gunzipSync(raw.body)
  return raw.body
}

// Paths and the least each compresses by (brotli), at sizes worth it.
const ASSETS: ReadonlyArray<readonly [path: string, ratio: number]> = [
  ['/openapi.json', 5],
  ['/docs/json', 5],
  ['/docs/static/swagger-ui-bundle.js', 3],
  ['/docs/static/swagger-ui.css', 3],
  ['/graphiql', 1.5],
  ['/graphiql/main.js', 1.5]
]

t.test('documents and page files are compressed as Accept-Encoding allows, each representation with its own strong ETag and 304', async (t) => {
  const { url } = await realServer(t)
  for (const [path, ratio] of ASSETS) {
    const plain = await get(url, path)
    t.equal(plain.status, 200, path)
    t.equal(plain.headers['content-encoding'], undefined, `${path}: as it is without Accept-Encoding`)
    t.equal(plain.headers.vary, 'Accept-Encoding', path)
    t.match(plain.headers['cache-control'], /^public/, path)
    const tags = new Set([plain.headers.etag])
    for (const [accept, coding] of [['br', 'br'], ['gzip, deflate', 'gzip'], ['gzip;q=1, br;q=0', 'gzip'], ['*', 'br'], ['identity', undefined], ['br;q=0, gzip;q=0', undefined]] as const) {
      const response = await get(url, path, { 'accept-encoding': accept })
      t.equal(response.headers['content-encoding'], coding, `${path}, Accept-Encoding: ${accept}`)
      t.equal(response.headers['content-length'], String(response.body.length), `${path}: the length of the bytes sent`)
      t.same(decoded(response), plain.body, `${path}, ${accept}: the same document`)
      t.match(response.headers.etag, /^"[A-Za-z0-9_-]+"$/, 'a strong tag')
      tags.add(response.headers.etag)
      if (coding === 'br') {
        t.ok(plain.body.length / response.body.length >= ratio, `${path}: ${plain.body.length} bytes, ${response.body.length} as brotli`)
      }
      const held = await get(url, path, { 'accept-encoding': accept, 'if-none-match': String(response.headers.etag) })
      t.equal(held.status, 304, `${path}, ${accept}: the tag held → 304`)
      t.equal(held.body.length, 0)
      t.equal(held.headers.etag, response.headers.etag)
      t.equal(held.headers.vary, 'Accept-Encoding')
    }
    t.equal(tags.size, 3, `${path}: one tag per representation (identity, br, gzip)`)
    const other = await get(url, path, { 'accept-encoding': 'br', 'if-none-match': String(plain.headers.etag) })
    t.equal(other.status, 200, `${path}: the tag of another representation is not this one`)
  }
  const icon = await get(url, '/favicon.ico', { 'accept-encoding': 'br' })
  t.equal(icon.headers['content-encoding'], undefined, 'an image is sent as it is')
})

t.test('API answers are not compressed', async (t) => {
  const { url, admin } = await realServer(t)
  const people = await get(url, '/people', { ...admin, 'accept-encoding': 'br, gzip' })
  t.equal(people.status, 200)
  t.equal(people.headers['content-encoding'], undefined)
})

t.test('every public page counts against PUBLIC_RATE_LIMIT_MAX per client address: then 429 with Retry-After, 304s included', async (t) => {
  const { url } = await realServer(t, { access: { limits: { publicMax: 7 } } })
  const paths = ['/', '/openapi.json', '/docs/json', '/docs/static/swagger-ui-bundle.js', '/graphiql', '/graphiql/main.js']
  for (const path of paths) t.equal((await get(url, path, { 'accept-encoding': 'br' })).status, 200, path)
  const tag = String((await get(url, '/openapi.json')).headers.etag)
  for (const path of [...paths, '/favicon.ico', '/docs']) {
    const refused = await get(url, path, { 'accept-encoding': 'br', 'if-none-match': tag })
    t.equal(refused.status, 429, `${path}: past the budget`)
    t.ok(Number(refused.headers['retry-after']) >= 1, `${path}: Retry-After ${String(refused.headers['retry-after'])}`)
    t.match(JSON.parse(refused.body.toString()), { code: 'RATE_LIMITED' })
  }
  t.equal((await get(url, '/health/live')).status, 200, 'probes are not counted')
})

t.test('Vary names Accept-Encoding beside what CORS varies on', async (t) => {
  const { url } = await realServer(t, { corsOrigins: ['https://app.example.org'] })
  const response = await get(url, '/openapi.json', { origin: 'https://app.example.org', 'accept-encoding': 'br' })
  t.equal(response.headers['content-encoding'], 'br')
  const vary = String(response.headers.vary).split(',').map((name) => name.trim().toLowerCase())
  t.ok(vary.includes('origin') && vary.includes('accept-encoding'), `Vary: ${String(response.headers.vary)}`)
})
