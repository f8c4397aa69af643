import { randomUUID } from 'node:crypto'
import type { KeyRevocations } from '@people-service/domain'
import type { Redis } from 'ioredis'

/**
 * The revocation version every instance reads, in Redis: a fresh random
 * value per revocation rather than a counter, so a Redis restart (which
 * forgets the key) can never bring back a value some cache still holds.
 */
export const redisKeyRevocations = (client: Redis, prefix: string): KeyRevocations => {
  const key = `${prefix}api-key-revocations`
  return {
    async version () {
      return (await client.get(key)) ?? 'none'
    },
    async revoked () {
      await client.set(key, randomUUID())
    }
  }
}
