import { createInMemoryPorts } from '@people-service/domain/testing'
import type { Ports } from '@people-service/domain'
import { buildApp, type AppOptions } from '@people-service/http'

interface Teardown { teardown(fn: () => unknown): void }

/** A fresh app over empty in-memory repositories, closed when the test ends. */
export const build = async (t: Teardown, options: Partial<AppOptions> = {}) => {
  const ports: Ports = options.ports ?? createInMemoryPorts()
  const app = await buildApp({ ...options, ports })
  t.teardown(() => app.close())
  return { app, ports }
}

export const ADA = {
  name: 'Ada Lovelace',
  age: 36,
  email: 'ada@example.org',
  address: { street: "12 St James's Square", city: 'London', country: 'UK' }
}
