import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const packageDir = fileURLToPath(new URL('..', import.meta.url))
const repositoryDir = fileURLToPath(new URL('../../..', import.meta.url))
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')

// Packing, an offline install and two compilations: slow on a busy machine.
t.setTimeout(300_000)

const run = (command: string, args: string[], cwd: string): string =>
  execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_loglevel: 'error' } })
const npm = (args: string[], cwd: string): string => run('npm', args, cwd)

// Another service's code, in TypeScript: the use cases over the in-memory
// adapters, and one read over the only port it needs, written by that service.
const CONSUMER = `
import { createUseCases, DomainError, getPerson, type Person, type PersonRepository } from '@people-service/domain'
import { createInMemoryPorts, SETUP_ACTOR } from '@people-service/domain/testing'
declare const console: { log(line: string): void }

const useCases = createUseCases(createInMemoryPorts())
const grace = await useCases.createPerson(SETUP_ACTOR, { name: 'Grace', age: 85 })
const rows = new Map<string, Person>([[grace.id, grace]])
const people: PersonRepository = {
  async findById (id) { return rows.get(id) },
  async findByIds (ids) { return ids.flatMap((id) => rows.get(id) ?? []) },
  async list ({ limit }) { return [...rows.values()].slice(0, limit).map(({ id, name }) => ({ id, name })) },
  async insert (person) { rows.set(person.id, person) },
  async update (person) { return rows.has(person.id) && Boolean(rows.set(person.id, person)) },
  async delete (id) { return rows.delete(id) }
}
const found = await getPerson({ people })(grace.id)

const ada = await useCases.createPerson(SETUP_ACTOR, { name: 'Ada', age: 36 })
const bob = await useCases.createPerson(SETUP_ACTOR, { name: 'Bob' })
await useCases.befriend(SETUP_ACTOR, ada.id, bob.id)
let code: string | undefined
try { await useCases.befriend(SETUP_ACTOR, ada.id, ada.id) } catch (error) { code = error instanceof DomainError ? error.code : undefined }
console.log(JSON.stringify({ own: found.name, name: ada.name, friends: (await useCases.listFriends(bob.id)).items, code }))
`

t.test('the domain builds from a clean tree, also after its dist was removed', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'domain-build-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  // The package as a fresh checkout has it, with the repository's compiler and types.
  cpSync(join(repositoryDir, 'tsconfig.base.json'), join(dir, 'tsconfig.base.json'))
  symlinkSync(join(repositoryDir, 'node_modules'), join(dir, 'node_modules'), 'dir')
  const copy = join(dir, 'packages', 'domain')
  mkdirSync(copy, { recursive: true })
  for (const entry of ['src', 'tsconfig.json', 'package.json']) cpSync(join(packageDir, entry), join(copy, entry), { recursive: true })

  run(process.execPath, [tsc, '-b'], copy)
  t.ok(existsSync(join(copy, 'dist', 'index.js')) && existsSync(join(copy, 'dist', 'index.d.ts')))
  rmSync(join(copy, 'dist'), { recursive: true })
  run(process.execPath, [tsc, '-b'], copy)
  t.ok(existsSync(join(copy, 'dist', 'index.js')), 'no build information left behind says it is up to date')
})

t.test('another service installs the packed domain offline, with its types, and runs use cases with nothing else', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'domain-consumer-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', dir], packageDir)) as Array<{ filename: string, files: Array<{ path: string }> }>
  t.ok(packed)
  const shipped = packed!.files.map((f) => f.path)
  t.ok(shipped.every((path) => ['package.json', 'README.md', 'LICENSE'].includes(path) || /^(dist|src)\//.test(path)), 'the build, its sources (for the source maps), README and LICENSE')
  t.ok(shipped.includes('dist/index.d.ts') && shipped.includes('dist/testing/index.js'), 'types and the in-memory adapters ship')
  t.notOk(shipped.some((path) => path.endsWith('.tsbuildinfo')), 'no build information')
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { dependencies?: object, private?: boolean, publishConfig?: { access?: string } }
  t.same(manifest.dependencies ?? {}, {}, 'the domain depends on nothing')
  t.notOk(manifest.private)
  t.equal(manifest.publishConfig?.access, 'public', 'a scoped package that may be published')

  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
  npm(['install', '--no-audit', '--no-fund', '--offline', join(dir, packed!.filename)], dir)
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { target: 'ES2023', lib: ['ES2023'], module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, types: [], outDir: 'out' },
    files: ['use.ts']
  }))
  writeFileSync(join(dir, 'use.ts'), CONSUMER)
  // The consumer compiles against the shipped types alone (no @types/node), then runs.
  run(process.execPath, [tsc, '-p', dir], dir)
  const output = JSON.parse(run(process.execPath, [join(dir, 'out', 'use.js')], dir)) as { own: string, name: string, friends: Array<{ name: string }>, code: string }
  t.equal(output.own, 'Grace', 'one use case over the one port it uses, implemented by the consumer')
  t.equal(output.name, 'Ada')
  t.same(output.friends.map((f) => f.name), ['Ada'])
  t.equal(output.code, 'SELF_FRIENDSHIP')
})
