import t from 'tap'
import { realServer } from './helper.js'

/*
 * /docs and /graphiql work with no internet access and under the service's
 * Content-Security-Policy: every asset they load comes from the service.
 */

const server = await realServer(t)
const origin = new URL(server.url).host

// Hosts the browser UIs are commonly pointed at; none may appear in what the pages load.
const CDNS = /unpkg\.com|cdn\.jsdelivr\.net|cdnjs\.cloudflare\.com|fonts\.googleapis\.com|fonts\.gstatic\.com/

const attributes = (html: string, name: string): string[] =>
  [...html.matchAll(new RegExp(`\\s${name}="([^"]*)"`, 'g'))].map((match) => match[1]!)

const cssUrls = (css: string): string[] =>
  [...css.matchAll(/url\(\s*['"]?([^'")]+)['"]?\s*\)/g)].map((match) => match[1]!).filter((url) => !url.startsWith('data:'))

interface Loaded { url: URL, status: number, type: string, body: string, csp: string | null }

/** Fetches a page and, transitively, every asset its HTML and CSS refer to. */
const loadPage = async (path: string): Promise<{ page: Loaded, csp: string | null, assets: Loaded[] }> => {
  const get = async (url: URL): Promise<Loaded> => {
    const response = await fetch(url)
    return { url, status: response.status, type: response.headers.get('content-type') ?? '', body: await response.text(), csp: response.headers.get('content-security-policy') }
  }
  const pageUrl = new URL(path, server.url)
  const response = await fetch(pageUrl)
  const page: Loaded = { url: pageUrl, status: response.status, type: response.headers.get('content-type') ?? '', body: await response.text(), csp: response.headers.get('content-security-policy') }
  const assets: Loaded[] = []
  const queue = [...attributes(page.body, 'src'), ...attributes(page.body, 'href')].map((ref) => new URL(ref, pageUrl))
  while (queue.length > 0) {
    const url = queue.shift()!
    if (assets.some((asset) => asset.url.href === url.href)) continue
    const asset = await get(url)
    assets.push(asset)
    if (asset.type.startsWith('text/css')) queue.push(...cssUrls(asset.body).map((ref) => new URL(ref, url)))
  }
  return { page, csp: response.headers.get('content-security-policy'), assets }
}

const directives = (csp: string): Map<string, string[]> =>
  new Map(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([name = '', ...values]) => [name, values]))

for (const [path, bootstrap] of [['/docs', '/docs/static/swagger-initializer.js'], ['/graphiql', '/graphiql/main.js']] as const) {
  t.test(`${path}: every asset comes from the service, and the page runs under its CSP`, async (t) => {
    const { page, csp, assets } = await loadPage(path)
    t.equal(page.status, 200)
    t.match(page.type, /^text\/html/)

    t.ok(assets.length >= 3, `${path} loads its scripts and styles (${assets.length})`)
    for (const asset of assets) {
      t.equal(asset.url.host, origin, `${asset.url.href} is served by the service`)
      t.equal(asset.csp, csp, `${asset.url.pathname} carries the page's policy`)
      t.equal(asset.status, 200, `${asset.url.pathname} is there`)
      t.notMatch(asset.body, CDNS, `${asset.url.pathname} names no CDN`)
    }
    const scripts = assets.filter((asset) => /javascript/.test(asset.type))
    t.ok(scripts.some((script) => script.url.pathname === bootstrap), `${bootstrap} starts the page`)
    const start = scripts.find((script) => script.url.pathname === bootstrap)!
    t.notMatch(start.body, /['"`]https?:\/\//, `${bootstrap} loads nothing by absolute URL`)

    // What the policy allows is what the page needs: its own scripts, no inline ones.
    t.ok(csp, 'a Content-Security-Policy')
    const policy = directives(csp ?? '')
    t.same(policy.get('script-src'), ["'self'"], 'scripts from the service only')
    t.same(policy.get('script-src-attr'), ["'none'"], 'no inline event handlers')
    t.same(policy.get('connect-src'), ["'self'"], 'requests to the service only')
    t.same(policy.get('object-src'), ["'none'"])
    const scriptTags = [...page.body.matchAll(/<script\b([^>]*)>/g)].map((match) => match[1]!)
    t.ok(scriptTags.length > 0)
    for (const tag of scriptTags) t.match(tag, /\ssrc="/, 'no inline script')
    t.notMatch(page.body, /\son[a-z]+=/i, 'no inline event handler')
  })
}

t.test('GET / and /favicon.ico are public: the address the server prints leads to the docs', async (t) => {
  const root = await fetch(`${server.url}/`)
  t.equal(root.status, 200, 'no credentials asked')
  const body = await root.json() as Record<string, string>
  t.match(body, { name: 'People Service', version: /^\d+\.\d+\.\d+/, docs: '/docs', graphiql: '/graphiql', openapi: '/openapi.json' })
  const document = await (await fetch(new URL(body.openapi!, server.url))).json() as { info: { version: string } }
  t.equal(document.info.version, body.version, 'the version the OpenAPI document states')
  for (const link of [body.docs!, body.graphiql!, body.openapi!]) {
    t.equal((await fetch(new URL(link, server.url))).status, 200, `${link} answers, without credentials`)
  }

  const icon = await fetch(`${server.url}/favicon.ico`)
  t.equal(icon.status, 200)
  t.equal(icon.headers.get('content-type'), 'image/x-icon')
  const bytes = Buffer.from(await icon.arrayBuffer())
  t.same([...bytes.subarray(0, 4)], [0, 0, 1, 0], 'an ICO file')
  const etag = icon.headers.get('etag')
  t.ok(etag, 'with a validator')
  t.match(icon.headers.get('cache-control'), /public/)
  t.equal((await fetch(`${server.url}/favicon.ico`, { headers: { 'if-none-match': etag! } })).status, 304, 'revalidated without the body')

  const posted = await fetch(`${server.url}/`, { method: 'POST' })
  t.equal(posted.status, 405, 'another method on / is 405, not 401')
  t.equal(posted.headers.get('allow'), 'GET, HEAD')
  t.equal((await fetch(`${server.url}/nowhere`)).status, 401, 'other paths still need credentials')
})
