import { runInNewContext } from 'node:vm'
import { getIntrospectionQuery } from 'graphql'
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

/**
 * The page's own script, as the service serves it, run with stand-ins for
 * React (hooks re-render the component) and GraphiQL (records its props):
 * what GraphiQL is given decides when it asks for the schema.
 */
const runEditorScript = async () => {
  const source = await (await fetch(`${server.url}/graphiql/main.js`)).text()
  const renders: Array<Record<string, unknown>> = []
  const state: unknown[] = []
  let component: (() => unknown) | undefined
  let slot = 0
  const render = () => { slot = 0; component?.() }
  const hook = <T>(initial: () => T): [T, number] => {
    const index = slot++
    if (!(index in state)) state[index] = initial()
    return [state[index] as T, index]
  }
  const React = {
    useState: <T>(initial: T | (() => T)) => {
      const [value, index] = hook(() => typeof initial === 'function' ? (initial as () => T)() : initial)
      return [value, (next: T) => { if (next !== state[index]) { state[index] = next; render() } }]
    },
    useRef: <T>(initial: T) => hook(() => ({ current: initial }))[0],
    useCallback: <T>(fn: T) => hook(() => fn)[0],
    useMemo: <T>(make: () => T, deps: unknown[]) => {
      const [memo] = hook(() => ({ deps: undefined as unknown[] | undefined, value: undefined as T }))
      if (memo.deps === undefined || deps.some((dep, i) => dep !== memo.deps![i])) Object.assign(memo, { deps, value: make() })
      return memo.value
    },
    createElement: (type: unknown, props: Record<string, unknown> | null) => ({ type, props })
  }
  const GraphiQL = Object.assign(() => null, {
    createFetcher: ({ url }: { url: string }) => async (params: unknown, options: { headers?: Record<string, string> } = {}) =>
      (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...options.headers }, body: JSON.stringify(params) })).json()
  })
  const ReactDOM = {
    createRoot: () => ({
      render: (element: { type: () => { props: Record<string, unknown> } }) => {
        component = () => renders.push(element.type().props)
        render()
      }
    })
  }
  const context = { React, ReactDOM, GraphiQL, URL, JSON, Object, setTimeout, clearTimeout, window: { location: { href: `${server.url}/graphiql` } }, document: { getElementById: () => ({}) } }
  runInNewContext(source, context)
  return renders
}

t.test('GraphiQL asks for the schema once credentials are in the headers, and again whenever they change; never with the placeholder', async (t) => {
  const renders = await runEditorScript()
  const props = () => renders.at(-1)!
  const settle = () => new Promise((resolve) => setTimeout(resolve, 700))
  t.equal(props().schema, null, 'at load, with the placeholder token: no schema asked for, so no 401 before anything ran')
  t.match(props().defaultHeaders, /<access_token from POST \/auth\/login>/, 'the placeholder says where the token comes from')
  const introspect = async () => {
    type Fetcher = (params: unknown, options: { headers: Record<string, string> }) => Promise<{ data?: { __schema?: unknown }, errors?: unknown[] }>
    const headers = JSON.parse(headerText) as Record<string, string>
    return (props().fetcher as Fetcher)({ query: getIntrospectionQuery() }, { headers })
  }

  let headerText = JSON.stringify({ Authorization: server.admin.authorization })
  const onEditHeaders = props().onEditHeaders as (text: string) => void
  const first = props().fetcher
  onEditHeaders(headerText.slice(0, 20))
  onEditHeaders(headerText)
  await settle()
  t.equal(props().schema, undefined, 'a token typed in: GraphiQL may introspect')
  t.not(props().fetcher, first, 'with a new fetcher, which makes it introspect again')
  t.ok((await introspect()).data?.__schema, 'and the schema comes back with those headers: Docs and autocomplete work without ↻')

  const second = props().fetcher
  onEditHeaders(`  ${headerText}\n`)
  await settle()
  t.equal(props().fetcher, second, 'the same credentials, laid out anew: no new introspection')

  const key = await (await fetch(`${server.url}/api-keys`, {
    method: 'POST', headers: { ...server.admin, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'graphiql' })
  })).json() as { key: string }
  headerText = JSON.stringify({ 'X-API-Key': key.key })
  onEditHeaders(headerText)
  await settle()
  t.not(props().fetcher, second, 'an API key instead: the schema is asked for again')
  t.ok((await introspect()).data?.__schema)

  onEditHeaders('{ "Authorization": "Bearer <access_token from POST /auth/login>" }')
  await settle()
  t.equal(props().schema, null, 'back to the placeholder: nothing asked for')
})
