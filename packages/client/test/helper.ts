import { mkdtempSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PeopleServiceClient, type ClientOptions } from '@people-service/client'
import { fastPasswordHasher } from '@people-service/domain/testing'
import type { Teardown } from '@people-service/infra/testing'
import { loadConfig, startServer } from '@people-service/server'

export const ADMIN_PASSWORD = 'the admin password of the client tests'

/**
 * The real server on 127.0.0.1 and a free port, on a SQLite file in a fresh
 * folder, configured from `env` as in production; closed when the test ends.
 */
export const startService = async (t: Teardown, env: Record<string, string> = {}): Promise<{ url: string }> => {
  const dir = mkdtempSync(join(tmpdir(), 'people-service-client-'))
  // No load shedding: the tests count requests, and a busy machine would add 503s (retries.test.ts makes its own).
  const config = loadConfig({
    HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '0', ADMIN_PASSWORD, JWT_SECRET: 'a-jwt-secret-for-the-client-tests-only!!', DATABASE_URL: `sqlite:${join(dir, 'people.db')}`, ...env
  })
  const server = await startServer(config, { logStream: { write: () => {} }, passwords: fastPasswordHasher() })
  t.teardown(async () => {
    await server.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return { url: `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}` }
}

/** A login token of the tests' admin. */
export const adminToken = async (url: string): Promise<string> =>
  (await new PeopleServiceClient({ baseUrl: url }).auth.login({ username: 'admin', password: ADMIN_PASSWORD })).access_token

/** A client logged in as the tests' admin. */
export const adminClient = async (url: string, options: Partial<ClientOptions> = {}): Promise<PeopleServiceClient> =>
  new PeopleServiceClient({ baseUrl: url, accessToken: await adminToken(url), ...options })

/** Every request a client sends, as its fetch saw it. */
export interface Sent { method: string, url: string, headers: Record<string, string> }

/** The platform's fetch, recording what goes through it. */
export const recordingFetch = (sent: Sent[]): ClientOptions['fetch'] => (url, init) => {
  sent.push({ method: init.method, url, headers: init.headers })
  return fetch(url, init as RequestInit)
}

/** Collects an async iterable. */
export const collect = async <T>(items: AsyncIterable<T>): Promise<T[]> => {
  const all: T[] = []
  for await (const item of items) all.push(item)
  return all
}
