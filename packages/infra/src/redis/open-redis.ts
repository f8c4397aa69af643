import { Redis } from 'ioredis'

/**
 * How long a command waits for Redis' answer before it fails, and how long a
 * connection with commands outstanding may stay silent before it is dropped.
 * A refused or closed connection fails a command at once, but a Redis that
 * hangs (stopped, swapping, a network path that drops packets) keeps the
 * socket open: without a limit every request that reads a counter or the
 * revocation version waited on it until the client gave up (30 s, with no
 * answer). Redis answers in well under a millisecond; past this the
 * command takes the path of an unreachable Redis (budgets fail open, login
 * limits count in process, credentials are read from the database), and the
 * dropped connection fails the commands after it at once until Redis answers
 * again, rather than each waiting this long.
 */
export const REDIS_COMMAND_TIMEOUT_MS = 300

/** Reconnecting in the background, a little later each time, at most every 2 s. */
export const reconnectDelay = (attempt: number): number => Math.min(attempt * 100, 2000)

/** A connection whose commands fail rather than wait: no offline queue, no retries, REDIS_COMMAND_TIMEOUT_MS. */
export const FAIL_FAST = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
  socketTimeout: REDIS_COMMAND_TIMEOUT_MS,
  retryStrategy: reconnectDelay
} as const

/**
 * A Redis client that fails fast: while the connection is down a command
 * errors at once instead of waiting in a queue, and one Redis does not answer
 * errors after REDIS_COMMAND_TIMEOUT_MS, so callers can apply their own
 * policy (rate limits fail open, API keys are read from the database) rather
 * than stall requests. It keeps reconnecting in the background.
 */
export const openRedis = (url: string, onError: (error: Error) => void = () => {}): Redis => {
  const client = new Redis(url, { ...FAIL_FAST, lazyConnect: true, connectTimeout: 2000 })
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
