import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'

/** The loop `npm run dev` runs, as built. */
const DEV_LOOP = new URL('../dist/dev-loop.js', import.meta.url).href
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')

// A program that notes each start (with what the build gave it) and each
// graceful stop, as the server's log would.
const PROGRAM = `
import { appendFileSync } from 'node:fs'
import { value } from './out/a.js'
appendFileSync('events.log', 'started ' + process.pid + ' ' + value + '\\n')
const timer = setInterval(() => {}, 1000)
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => {
  setTimeout(() => { appendFileSync('events.log', 'stopped ' + process.pid + '\\n'); clearInterval(timer) }, 200)
})
`

const RUNNER = `
import { startDevLoop } from ${JSON.stringify(DEV_LOOP)}
const loop = startDevLoop({
  compiler: { command: process.execPath, args: [${JSON.stringify(tsc)}, '-b', '--watch', '--preserveWatchOutput'] },
  program: { command: process.execPath, args: ['program.mjs'] }
})
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => { loop.stop().catch(() => {}) })
await loop.stopped
`

const source = (value: string) => `import { other } from './b.js'\nexport const value: string = ${value} + other\n`

t.test('the dev loop restarts once per build however many files it writes, not on errors, and Ctrl-C leaves nothing running', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'dev-loop-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  mkdirSync(join(dir, 'src'))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, types: [], rootDir: 'src', outDir: 'out', declaration: true, sourceMap: true },
    include: ['src']
  }))
  writeFileSync(join(dir, 'src', 'a.ts'), source("'one'"))
  writeFileSync(join(dir, 'src', 'b.ts'), "export const other: string = '-b'\n")
  writeFileSync(join(dir, 'program.mjs'), PROGRAM)

  // Its own process group, so that Ctrl-C can be sent as a terminal sends it: to every process of the group.
  const runner = spawn(process.execPath, ['--input-type=module', '-e', RUNNER], { cwd: dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  runner.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  runner.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const exited = new Promise<number | null>((resolve) => runner.once('exit', (code) => resolve(code)))
  const group = runner.pid as number
  t.teardown(() => { try { process.kill(-group, 'SIGKILL') } catch {} })

  const events = (): string[] => {
    try {
      return readFileSync(join(dir, 'events.log'), 'utf8').trim().split('\n').filter(Boolean)
    } catch {
      return []
    }
  }
  const starts = () => events().filter((line) => line.startsWith('started'))
  const until = async (what: string, done: () => boolean): Promise<void> => {
    for (const deadline = Date.now() + 90_000; !done();) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${output}\n${events().join('\n')}`)
      await sleep(100)
    }
  }

  await until('the first start', () => starts().length === 1)
  t.match(starts()[0], / one-b$/)

  // One edit touching two sources: tsc writes six files, the program restarts once.
  writeFileSync(join(dir, 'src', 'b.ts'), "export const other: string = '-B'\n")
  writeFileSync(join(dir, 'src', 'a.ts'), source("'two'"))
  await until('the restart', () => starts().length >= 2 && / two-B$/.test(starts().at(-1) as string))
  await sleep(3000)
  t.equal(starts().length, 2, 'one restart for the edit')
  t.equal(events().filter((line) => line.startsWith('stopped')).length, 1, 'the old program was stopped gracefully first')

  writeFileSync(join(dir, 'src', 'a.ts'), 'export const value: string = 42\n')
  await until('the compiler\'s report', () => output.includes('the build has errors'))
  await sleep(1000)
  t.equal(starts().length, 2, 'a build with errors leaves the running program alone')

  writeFileSync(join(dir, 'src', 'a.ts'), source("'three'"))
  await until('the restart after the fix', () => starts().length === 3)
  t.match(starts()[2], / three-B$/)

  process.kill(-group, 'SIGINT')
  t.equal(await exited, 0, 'Ctrl-C: the loop exits 0')
  const last = (starts()[2] as string).split(' ')[1]
  t.ok(events().includes(`stopped ${last}`), 'the program had its graceful stop')
  t.throws(() => process.kill(-group, 0), { code: 'ESRCH' }, 'no process of the group is left: neither the compiler nor the program')
})
