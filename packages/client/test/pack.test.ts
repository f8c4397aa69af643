import { execFile as execFileCallback, execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Webhook } from 'standardwebhooks'
import t from 'tap'
import { ADMIN_PASSWORD, adminClient, startService } from './helper.js'

const execFile = promisify(execFileCallback)
const packageDir = fileURLToPath(new URL('..', import.meta.url))
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')

// Packing, an offline install, a compilation and a run: slow on a busy machine.
t.setTimeout(300_000)

const npm = (args: string[], cwd: string): string =>
  execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_loglevel: 'error' } })

// Another service's code, in TypeScript, against the installed package alone:
// no DOM or Node typings, strict, every optional property exact.
/** The README's five lines, with what Node would give them declared and the service's address filled in. */
const readmeSnippet = (url: string): string => {
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8')
  const section = readme.slice(readme.indexOf('## A client for other services'))
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1] ?? ''
  return 'declare const console: { log(line: string): void }\ndeclare const process: { env: Record<string, string | undefined> }\n' +
    code.replace("'http://127.0.0.1:3000'", JSON.stringify(url))
}

const CONSUMER = `
import { PeopleServiceClient, PeopleServiceError, PreconditionFailedError, verifyWebhook, type PersonPatch, type PersonSummary } from '@people-service/client'
declare const console: { log(line: string): void }
declare const process: { argv: string[] }

const [baseUrl, password, webhook] = process.argv.slice(2) as [string, string, string]
const { access_token: accessToken } = await new PeopleServiceClient({ baseUrl }).auth.login({ username: 'admin', password })
const client = new PeopleServiceClient({ baseUrl, accessToken })

const ada = await client.people.create({ name: 'Ada Lovelace', age: 36 })
await client.people.create({ name: 'Adaline' })
await client.people.create({ name: 'Bob' })
const found: PersonSummary[] = []
for await (const person of client.people.list({ name: 'ada', limit: 1 })) found.push(person)

const patch: PersonPatch = { age: 37, address: null }
// @ts-expect-error a person has no nickname: the generated types say so
const wrong: PersonPatch = { nickname: 'Ada' }
const updated = await client.people.update(ada.id, patch, { ifMatch: ada.lastResponse.etag })
let stale = ''
try {
  await client.people.update(ada.id, { age: 99 }, { ifMatch: ada.lastResponse.etag })
} catch (error) {
  if (error instanceof PreconditionFailedError) stale = error.statusCode + ' ' + error.code
}
let missing = 0
try {
  await client.people.get('no-such-person')
} catch (error) {
  if (error instanceof PeopleServiceError && error.requestId !== undefined) missing = error.statusCode
}
const { secret, headers, body } = JSON.parse(webhook) as { secret: string, headers: Record<string, string>, body: string }
const event = await verifyWebhook(secret, headers, body)
console.log(JSON.stringify({ found: found.map((p) => p.name), age: updated.age, address: updated.address, stale, missing, event: event.type, unused: typeof wrong }))
`

t.test('another service installs the packed client offline and, type-checked strictly, runs it against the server', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'client-consumer-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', dir], packageDir)) as Array<{ filename: string, files: Array<{ path: string }> }>
  t.ok(packed)
  const shipped = packed!.files.map((f) => f.path)
  t.ok(shipped.every((path) => ['package.json', 'README.md', 'LICENSE'].includes(path) || /^(dist|src)\//.test(path)), 'the build, its sources (for the source maps), README and LICENSE')
  t.ok(shipped.includes('dist/index.d.ts') && shipped.includes('dist/generated/openapi.d.ts'), 'the types, the generated ones too')
  t.notOk(shipped.some((path) => path.endsWith('.tsbuildinfo') || path.startsWith('test/') || path.startsWith('scripts/')), 'no build information, tests or scripts')
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { dependencies?: object, private?: boolean, type?: string, publishConfig?: { access?: string } }
  t.same(manifest.dependencies ?? {}, {}, 'no runtime dependency: the platform\'s fetch is enough')
  t.equal(manifest.type, 'module')
  t.notOk(manifest.private)
  t.equal(manifest.publishConfig?.access, 'public')

  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
  npm(['install', '--no-audit', '--no-fund', '--offline', join(dir, packed!.filename)], dir)
  const service = await startService(t)
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { target: 'ES2023', lib: ['ES2023'], module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true, types: [], outDir: 'out' },
    files: ['use.ts', 'readme.ts']
  }))
  writeFileSync(join(dir, 'use.ts'), CONSUMER)
  const snippet = readmeSnippet(service.url)
  t.equal(snippet.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('declare ')).length, 5, 'five lines')
  writeFileSync(join(dir, 'readme.ts'), snippet)
  // The shipped declarations are checked too (no skipLibCheck).
  await execFile(process.execPath, [tsc, '-p', dir], { cwd: dir })
  const secret = `whsec_${Buffer.from('a webhook secret of the consumer test').toString('base64')}`
  const body = JSON.stringify({ specversion: '1.0', id: 'event-1', type: 'person.created', data: { id: 'x' } })
  const now = new Date()
  const webhook = JSON.stringify({
    secret,
    body,
    headers: { 'webhook-id': 'event-1', 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign('event-1', now, body) }
  })
  const { stdout } = await execFile(process.execPath, [join(dir, 'out', 'use.js'), service.url, ADMIN_PASSWORD, webhook], { cwd: dir })
  t.same(JSON.parse(stdout), {
    found: ['Ada Lovelace', 'Adaline'],
    age: 37,
    address: null,
    stale: '412 PRECONDITION_FAILED',
    missing: 404,
    event: 'person.created',
    unused: 'object'
  })

  const { key } = await (await adminClient(service.url)).apiKeys.create({ name: 'the README' })
  const readme = await execFile(process.execPath, [join(dir, 'out', 'readme.js')], { cwd: dir, env: { ...process.env, PEOPLE_API_KEY: key } })
  t.same(readme.stdout.split('\n').filter(Boolean).sort(), ['Ada Lovelace', 'Ada Lovelace', 'Adaline'], 'the README\'s lines run as written')
})
