import { randomUUID } from 'node:crypto'
import type { KeyRevocations } from '@people-service/domain'
import type { Redis } from 'ioredis'

export interface RedisKeyRevocationsOptions {
  /** How often a revocation that could not be announced is announced again. */
  retryMs?: number
  onAnnounceFailed?: (error: unknown) => void
}

/**
 * The revocation version every instance reads, in Redis: a fresh random
 * value per revocation rather than a counter, so a Redis restart (which
 * forgets the key) can never bring back a value some cache still holds.
 *
 * A revocation is stored in the database before it is announced here. When
 * Redis is down the announcement is retried until it lands, and meanwhile
 * this instance reports the version as unreadable, so it caches nothing.
 */
export const redisKeyRevocations = (client: Redis, prefix: string, { retryMs = 1000, onAnnounceFailed = () => {} }: RedisKeyRevocationsOptions = {}): KeyRevocations & { close(): void } => {
  const key = `${prefix}api-key-revocations`
  let retry: NodeJS.Timeout | undefined

  const announce = async (): Promise<boolean> => {
    try {
      await client.set(key, randomUUID())
      return true
    } catch (error) {
      onAnnounceFailed(error)
      return false
    }
  }

  return {
    async version () {
      if (retry !== undefined) throw new Error('a revocation is waiting to be announced')
      return (await client.get(key)) ?? 'none'
    },
    async revoked () {
      if (retry !== undefined || await announce()) return
      retry = setInterval(() => {
        announce().then((done) => {
          if (done) { clearInterval(retry); retry = undefined }
        }, () => {})
      }, retryMs)
      retry.unref()
    },
    close () {
      clearInterval(retry)
    }
  }
}
