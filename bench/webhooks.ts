/*
 * What delivering webhooks costs the write path: POST /person against the
 * built server (SQLite), with no webhook and with one webhook to a receiver
 * on loopback that answers at once, alternated, 8 s each. Prints req/s,
 * p99 and how many events the receiver had been sent by 1.5 s after the load.
 * Run: npm run build && node --import tsx bench/webhooks.ts
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'

const MAIN = fileURLToPath(new URL('../packages/server/dist/main.js', import.meta.url))
const PORT = 3997
const PASSWORD = 'bench admin password'

let received = 0
const hooks = createServer((request, response) => {
  request.resume()
  request.on('end', () => { received++; response.writeHead(204).end() })
})
await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve))
const hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/in`

const run = async (withWebhook: boolean) => {
  const dir = mkdtempSync(join(tmpdir(), 'people-service-bench-webhooks-'))
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      PORT: String(PORT),
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(dir, 'people.db')}`,
      ADMIN_PASSWORD: PASSWORD,
      WEBHOOK_ALLOW_PRIVATE: 'true',
      RATE_LIMIT_MAX: '0',
      LOG_LEVEL: 'warn',
      JWT_SECRET: 'a-bench-secret-that-is-long-enough-for-hs256'
    },
    stdio: 'ignore'
  })
  const url = `http://127.0.0.1:${PORT}`
  for (;;) {
    const live = await fetch(`${url}/health/live`).then((r) => r.ok, () => false)
    if (live) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const login = await fetch(`${url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: PASSWORD }) })
  const headers = { authorization: `Bearer ${(await login.json() as { access_token: string }).access_token}`, 'content-type': 'application/json' }
  if (withWebhook) await fetch(`${url}/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: hookUrl, types: ['person.created'] }) })
  const before = received
  const result = await autocannon({ url: `${url}/person`, method: 'POST', headers, body: JSON.stringify({ name: 'Bench Person', age: 30 }), connections: 16, duration: 8 })
  await new Promise((resolve) => setTimeout(resolve, 1500))
  child.kill('SIGTERM')
  await new Promise((resolve) => child.on('exit', resolve))
  rmSync(dir, { recursive: true, force: true })
  return { webhook: withWebhook, reqPerSec: Math.round(result.requests.average), p99Ms: result.latency.p99, non2xx: result.non2xx, created: result.requests.total, sentWithin1500Ms: received - before }
}

for (const withWebhook of [false, true, false, true]) console.log(JSON.stringify(await run(withWebhook)))
hooks.close()
