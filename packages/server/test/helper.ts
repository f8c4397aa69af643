import { mkdtempSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fastPasswordHasher } from '@people-service/domain/testing'
import { connectRedis, openRedis } from '@people-service/infra'
import { testRedisUrl, type Teardown } from '@people-service/infra/testing'
import { loadConfig, startServer } from '@people-service/server'
import type { FastifyBaseLogger } from 'fastify'

export const ADMIN_PASSWORD = 'the admin password of the tests'
export const JWT_SECRET = 'a-jwt-secret-for-the-server-tests-only!!'

/** A SQLite file in a fresh directory, removed when the test ends. */
export const tempDatabaseUrl = (t: Teardown): string => {
  const dir = mkdtempSync(join(tmpdir(), 'people-service-server-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return `sqlite:${join(dir, 'people.db')}`
}

export interface Started {
  url: string
  logs: string[]
  /** The server's own logger, configured as in production. */
  log: FastifyBaseLogger
  close(): Promise<void>
}

/**
 * The real server on 127.0.0.1 and a free port, configured from `env` as in
 * production, its log lines captured; closed when the test ends.
 */
export const start = async (t: Teardown, env: Record<string, string>, { realHashing = false } = {}): Promise<Started> => {
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', ADMIN_PASSWORD, JWT_SECRET, ...env })
  const logs: string[] = []
  const server = await startServer(config, {
    logStream: { write: (line) => { logs.push(line) } },
    ...(realHashing ? {} : { passwords: fastPasswordHasher() })
  })
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    await server.close()
  }
  t.teardown(close)
  return { url: `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`, logs, log: server.app.log, close }
}

export const call = async (base: string, method: string, path: string, headers: Record<string, string> = {}, body?: unknown) => {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) }
}

export const login = async (base: string, username = 'admin', password = ADMIN_PASSWORD): Promise<Record<string, string>> => {
  const response = await call(base, 'POST', '/auth/login', {}, { username, password })
  if (response.status !== 200) throw new Error(`login failed: ${response.text}`)
  return { authorization: `Bearer ${response.json().access_token}` }
}

/** A Redis key prefix of this test alone; every key under it is deleted when the test ends. */
export const redisPrefix = async (t: Teardown): Promise<string> => {
  const prefix = `people-service-test:${process.pid}:${Math.random().toString(36).slice(2)}:`
  t.teardown(async () => {
    const client = openRedis(await testRedisUrl())
    if (await connectRedis(client)) {
      const keys = await client.keys(`${prefix}*`)
      if (keys.length > 0) await client.del(...keys)
      await client.quit()
    } else {
      client.disconnect()
    }
  })
  return prefix
}
