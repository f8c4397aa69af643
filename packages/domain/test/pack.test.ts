import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const packageDir = fileURLToPath(new URL('..', import.meta.url))
const npm = (args: string[], cwd: string): string =>
  execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_loglevel: 'error' } })

t.test('another service installs the packed domain and runs a use case with nothing else', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'domain-consumer-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', dir], packageDir)) as Array<{ filename: string, files: Array<{ path: string }> }>
  t.ok(packed)
  t.ok(packed!.files.every((f) => f.path === 'package.json' || f.path.startsWith('dist/') || f.path === 'README.md'), 'only the build ships')
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { dependencies?: object }
  t.same(manifest.dependencies ?? {}, {}, 'the domain depends on nothing')

  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
  npm(['install', '--no-audit', '--no-fund', '--offline', join(dir, packed!.filename)], dir)
  writeFileSync(join(dir, 'use.mjs'), `
    import { createUseCases, DomainError } from '@people-service/domain'
    import { createInMemoryPorts } from '@people-service/domain/testing'
    const useCases = createUseCases(createInMemoryPorts())
    const ada = await useCases.createPerson({ name: 'Ada', age: 36 })
    const bob = await useCases.createPerson({ name: 'Bob' })
    await useCases.befriend(ada.id, bob.id)
    let code
    try { await useCases.befriend(ada.id, ada.id) } catch (error) { code = error instanceof DomainError && error.code }
    console.log(JSON.stringify({ name: ada.name, friends: await useCases.listFriends(bob.id), code }))
  `)
  const output = JSON.parse(execFileSync(process.execPath, ['use.mjs'], { cwd: dir, encoding: 'utf8' })) as { name: string, friends: Array<{ name: string }>, code: string }
  t.equal(output.name, 'Ada')
  t.same(output.friends.map((f) => f.name), ['Ada'])
  t.equal(output.code, 'SELF_FRIENDSHIP')
})
