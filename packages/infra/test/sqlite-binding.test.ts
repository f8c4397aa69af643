import { spawnSync } from 'node:child_process'
import t from 'tap'

/*
 * better-sqlite3 12 aborts the process on Node 24.19 and later when the
 * garbage collector frees one of its statements outside a JavaScript call
 * (see src/sqlite/better-sqlite3.ts). The server drops statements all the
 * time (the statement cache evicts, every pragma prepares one), so a process
 * that prepares and drops statements for a while, under collections of its
 * own timing, must live on and exit cleanly on every runtime the tests run on.
 */
const churn = `
import { BetterSqlite3 } from '@people-service/infra'
const db = new BetterSqlite3(':memory:')
db.exec('create table t (x)')
let prepared = 0
const timer = setInterval(() => {
  for (let i = 0; i < 5000; i++) db.prepare('select ' + (i % 50) + ' from t').all()
  prepared += 5000
}, 1)
setTimeout(() => { clearInterval(timer); db.close(); console.log(prepared) }, 1500)
`

t.test('statements and connections the garbage collector frees do not end the process', async (t) => {
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', churn], { encoding: 'utf8', timeout: 30_000 })
  t.equal(child.signal, null, `not killed by a signal (stderr: ${child.stderr.slice(0, 300)})`)
  t.equal(child.status, 0, 'exits cleanly')
  t.ok(Number(child.stdout.trim()) >= 50_000, `prepared and dropped many statements (${child.stdout.trim()})`)
})
