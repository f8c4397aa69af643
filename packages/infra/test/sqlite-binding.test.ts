import { spawn } from 'node:child_process'
import t from 'tap'

/*
 * better-sqlite3 12 aborts the process on Node 24 when the
 * garbage collector frees one of its statements outside a JavaScript call
 * (see src/sqlite/better-sqlite3.ts). The server drops statements all the
 * time (the statement cache evicts, every pragma prepares one), so processes
 * that prepare and drop statements for a while, under collections of V8's
 * own timing, must live on and exit cleanly on every runtime the tests run
 * on. The abort depends on when collections happen: with 12 on Node 24, one
 * such process aborted in about three runs of four, so four run at once.
 * They load the binding module alone, as the whole service's modules made
 * the abort rarer in a process that does nothing else.
 */
const binding = new URL('../dist/sqlite/better-sqlite3.js', import.meta.url).href
const churn = `
import { BetterSqlite3 } from ${JSON.stringify(binding)}
const db = new BetterSqlite3(':memory:')
db.exec('create table t (x)')
let prepared = 0
const timer = setInterval(() => {
  for (let i = 0; i < 5000; i++) db.prepare('select ' + (i % 50) + ' from t').all()
  prepared += 5000
}, 1)
setTimeout(() => { clearInterval(timer); db.close(); console.log(prepared) }, 1500)
`

interface Exit { code: number | null, signal: NodeJS.Signals | null, stdout: string, stderr: string }

const runChurn = async (): Promise<Exit> => new Promise((resolve, reject) => {
  const child = spawn(process.execPath, ['--input-type=module', '-e', churn], { timeout: 30_000 })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  child.on('error', reject)
  child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))
})

t.test('statements and connections the garbage collector frees do not end the process', async (t) => {
  const exits = await Promise.all([runChurn(), runChurn(), runChurn(), runChurn()])
  for (const [i, exit] of exits.entries()) {
    t.equal(exit.signal, null, `process ${i + 1}: not ended by a signal (stderr: ${exit.stderr.slice(0, 300)})`)
    t.equal(exit.code, 0, `process ${i + 1}: exits cleanly`)
    t.ok(Number(exit.stdout.trim()) >= 20_000, `process ${i + 1}: prepared and dropped many statements (${exit.stdout.trim()})`)
  }
})
