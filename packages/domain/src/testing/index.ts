import { scryptPasswordHasher } from '../account/scrypt-password-hasher.js'

export { createInMemoryPorts, inMemoryMessageEvents, type InMemoryMessageEvents } from './in-memory.js'
export { inMemoryIdempotencyRepository } from './in-memory-idempotency.js'
export { inMemoryEventLog, type InMemoryEventLog } from './in-memory-changes.js'
export { inMemoryAccountRepository, inMemoryApiKeyRepository, inMemoryApiKeyUsageRepository } from './in-memory-access.js'
export { repositoryContract, type ContractCase, type RepositoryPorts } from './repository-contract.js'

/**
 * Scrypt with 1 MiB of memory instead of 32: the same code path, cheap enough
 * for suites that log in hundreds of times. Never for stored passwords.
 */
export const fastPasswordHasher = () => scryptPasswordHasher({ N: 2 ** 10, r: 8, p: 1 })
export { inMemoryWebhookRepository } from './in-memory-webhooks.js'

/** Who a test's setup acts as, when the test is not about who acts: an account that need not exist. */
export const SETUP_ACTOR = { kind: 'account', id: '00000000-0000-7000-8000-000000000001' } as const
