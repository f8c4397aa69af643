import t from 'tap'
import { createPostgresDatabase } from '@people-service/infra/testing'
import { startServer } from '../src/start-server.js'
import { loadConfig } from '../src/config.js'
import { ADMIN_PASSWORD } from './helper.js'
import { adminHeaders } from './server-process.js'
import { tcpProxy } from './tcp-proxy.js'

t.test('PostgreSQL going away: fast 503s, readiness 503, recovery on its own', async (t) => {
  const database = await createPostgresDatabase('people_fault')
  t.teardown(database.drop)
  const target = new URL(database.url)
  const proxy = await tcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
  t.teardown(() => proxy.close())
  const viaProxy = new URL(target)
  viaProxy.host = `127.0.0.1:${proxy.port}`

  const server = await startServer(loadConfig({
    PORT: '0', LOG_LEVEL: 'silent', DATABASE_URL: viaProxy.href, ADMIN_PASSWORD
  }))
  t.teardown(() => server.close())
  const base = `http://127.0.0.1:${(server.app.server.address() as { port: number }).port}`
  const headers = await adminHeaders(base)
  const post = () => fetch(`${base}/person`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{"name":"Ada"}' })

  t.equal((await post()).status, 201)
  t.equal((await fetch(`${base}/health/ready`)).status, 200)

  await proxy.cut()
  const started = Date.now()
  const failed = await fetch(`${base}/people`, { headers })
  t.equal(failed.status, 503, 'an unavailable database is 503')
  t.match(await failed.json(), { statusCode: 503, code: 'DEPENDENCY_UNAVAILABLE' })
  t.ok(Date.now() - started < 5000, `failed fast (${Date.now() - started} ms)`)
  t.equal((await post()).status, 503)
  t.equal((await fetch(`${base}/health/ready`)).status, 503)
  t.equal((await fetch(`${base}/health/live`)).status, 200, 'the process itself is fine')

  await proxy.restore()
  let recovered = false
  for (let i = 0; i < 50 && !recovered; i++) {
    recovered = (await fetch(`${base}/health/ready`)).status === 200
    if (!recovered) await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.ok(recovered, 'ready again once the database is back')
  t.equal((await post()).status, 201)
  t.equal((await fetch(`${base}/people`, { headers })).status, 200)
})
