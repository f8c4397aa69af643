import { createInMemoryPorts, fastPasswordHasher } from '@people-service/domain/testing'
import type { Ports, Role } from '@people-service/domain'
import { buildApp, type AccessOptions, type AppOptions } from '@people-service/http'
import type { FastifyInstance } from 'fastify'

interface Teardown { teardown(fn: () => unknown): void }

export const TEST_JWT_SECRET = 'a-test-secret-that-is-long-enough-for-hs256!'
export const PASSWORD = 'correct horse battery staple'

export type Headers = Record<string, string>

export interface BuildOptions extends Partial<Omit<AppOptions, 'access'>> {
  access?: Partial<AccessOptions>
  /** Adds routes before the app starts (routes stand in for other adapters). */
  extend?: (app: FastifyInstance) => void
}

let accounts = 0

/** Creates an account with a role and logs it in the way a client would. */
export const loginAs = async (app: FastifyInstance, role: Role, username = `${role}-${++accounts}`): Promise<Headers> => {
  await app.access.useCases.createAccount({ username, password: PASSWORD, role })
  const response = await app.inject({ method: 'POST', url: '/auth/login', payload: { username, password: PASSWORD } })
  if (response.statusCode !== 200) throw new Error(`login failed: ${response.body}`)
  return { authorization: `Bearer ${response.json<{ access_token: string }>().access_token}` }
}

/** Creates an API key as `owner` and returns the headers that use it. */
export const apiKeyOf = async (app: FastifyInstance, owner: Headers, body: Record<string, unknown> = {}): Promise<{ 'x-api-key': string, id: string }> => {
  const response = await app.inject({ method: 'POST', url: '/api-keys', headers: owner, payload: { name: 'test key', ...body } })
  if (response.statusCode !== 201) throw new Error(`key creation failed: ${response.body}`)
  const { id, key } = response.json<{ id: string, key: string }>()
  return { 'x-api-key': key, id }
}

/**
 * A fresh app over empty in-memory repositories, closed when the test ends,
 * with the same authentication as production and an admin logged in.
 * Passwords are hashed with cheap scrypt parameters so logins stay fast.
 */
export const build = async (t: Teardown, options: BuildOptions = {}) => {
  const ports: Ports = options.ports ?? createInMemoryPorts({ passwords: fastPasswordHasher() })
  const { extend: _extend, ...appOptions } = options
  const app = await buildApp({
    ...appOptions,
    ports,
    access: { ...options.access, tokens: { secret: TEST_JWT_SECRET, ...options.access?.tokens } }
  })
  t.teardown(() => app.close())
  options.extend?.(app)
  const admin = await loginAs(app, 'admin')
  return { app, ports, admin, as: (role: Role) => loginAs(app, role) }
}

export const ADA = {
  name: 'Ada Lovelace',
  age: 36,
  email: 'ada@example.org',
  address: { street: "12 St James's Square", city: 'London', country: 'UK' }
}
