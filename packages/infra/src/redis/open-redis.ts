import { Redis } from 'ioredis'

/**
 * A Redis client that fails fast: while the connection is down a command
 * errors at once instead of waiting in a queue, so callers can apply their
 * own policy (rate limits fail open, API keys are read from the database)
 * rather than stall requests. It keeps reconnecting in the background.
 */
export const openRedis = (url: string, onError: (error: Error) => void = () => {}): Redis => {
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2000)
  })
  // Connection errors also surface on each command, where the callers handle
  // them; without a listener ioredis would print every reconnect attempt.
  client.on('error', onError)
  return client
}

/** Connects, waiting at most `timeoutMs`; false when Redis did not answer (it keeps trying). */
export const connectRedis = async (client: Redis, timeoutMs = 2000): Promise<boolean> => {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<false>((resolve) => { timer = setTimeout(() => resolve(false), timeoutMs) })
  try {
    return await Promise.race([client.connect().then(() => true, () => false), timeout])
  } finally {
    clearTimeout(timer)
  }
}
