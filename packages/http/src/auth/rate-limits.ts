import fastifyRateLimit from '@fastify/rate-limit'
import type { Caller } from '@people-service/domain'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

export interface RateLimitSettings {
  /** Requests per window per caller; 0 switches per-caller limits off. */
  max: number
  windowMs: number
  /** Attempts per window per client address and username; 0 switches the login limit off. */
  loginMax: number
  loginWindowMs: number
  /** An ioredis client: counters shared by every instance. Absent: in-process counters. */
  redis?: object
  /** Prefix of every counter key in Redis, one per deployment. */
  redisPrefix?: string
}

export const RATE_LIMIT_DEFAULTS: RateLimitSettings = { max: 1000, windowMs: 60_000, loginMax: 10, loginWindowMs: 15 * 60_000 }

// One address may try this many usernames' worth of attempts: stops spraying
// one password across many accounts, while a shared address (an office NAT)
// still leaves room for its people.
const LOGIN_ADDRESS_FACTOR = 5

export interface RateLimits {
  /**
   * Counts a request against the caller's budget; throws 429 past it. The
   * `RateLimit-*` headers go on `reply` when there is one (a subscription
   * over WebSocket has none).
   */
  charge(request: FastifyRequest, reply: FastifyReply | undefined, caller: Caller): Promise<void>
  /** Counts a login attempt per address and per address + username; throws 429 past either. */
  chargeLogin(request: FastifyRequest, reply: FastifyReply, username: string): Promise<void>
}

type Limiter = ReturnType<FastifyInstance['createRateLimit']>

export class RateLimitedError extends Error {
  readonly statusCode = 429
  readonly code = 'RATE_LIMITED'
  /** Seconds until the window resets (the `Retry-After` value). */
  readonly retryAfter: number

  constructor (message: string, retryAfter: number) {
    super(message)
    this.retryAfter = retryAfter
  }
}

const WARN_EVERY_MS = 10_000

/**
 * Per-caller budgets through @fastify/rate-limit's limiter, applied by the
 * access hook once the caller is known (the plugin's own hook would run
 * before authentication and could only key by address).
 *
 * When the store (Redis) cannot be reached, requests are let through
 * without a budget and a warning is logged at most every 10 s: limits
 * protect capacity, not data, and authentication and authorization still
 * apply in full, so an outage of the counter store should not become an
 * outage of the API.
 */
export const installRateLimits = async (app: FastifyInstance, settings: RateLimitSettings): Promise<RateLimits> => {
  await app.register(fastifyRateLimit, {
    global: false,
    ...(settings.redis === undefined ? {} : { redis: settings.redis, nameSpace: `${settings.redisPrefix ?? 'people-service:'}rate-limit:` })
  })

  let lastWarning = 0
  const storeFailed = (request: FastifyRequest, error: unknown): void => {
    const now = Date.now()
    if (now - lastWarning < WARN_EVERY_MS) return
    lastWarning = now
    request.log.warn({ err: error }, 'rate-limit store unavailable: requests are not being limited')
  }

  const apply = async (limiter: Limiter, request: FastifyRequest, reply: FastifyReply | undefined, what: string): Promise<void> => {
    let result: Awaited<ReturnType<Limiter>>
    try {
      result = await limiter(request)
    } catch (error) {
      storeFailed(request, error)
      return
    }
    if (result.isAllowed) return
    reply?.header('ratelimit-limit', result.max)
    reply?.header('ratelimit-remaining', result.remaining)
    reply?.header('ratelimit-reset', result.ttlInSeconds)
    if (result.isExceeded) {
      reply?.header('retry-after', result.ttlInSeconds)
      throw new RateLimitedError(`${what}: ${result.max} requests per ${Math.round(result.timeWindow / 1000)} s; retry in ${result.ttlInSeconds} s`, result.ttlInSeconds)
    }
  }

  // The limiter sees the caller through the request it is given. An HTTP
  // request carries its caller; a WebSocket's upgrade request carries none,
  // and one connection may serve several, so the limiter is then given a
  // view of the request that names the caller being charged. Only then: an
  // object used as a prototype, on every request, slows every property
  // access of every request in V8.
  const charged = new WeakMap<FastifyRequest, Caller>()
  const withCaller = (request: FastifyRequest, caller: Caller): FastifyRequest => {
    if (request.caller === caller) return request
    const view = Object.create(request) as FastifyRequest
    charged.set(view, caller)
    return view
  }
  const callerOf = (request: FastifyRequest): Caller | undefined => charged.get(request) ?? request.caller
  const callerBudget = (request: FastifyRequest): number => callerOf(request)?.rateLimit ?? settings.max
  const callers = app.createRateLimit({
    keyGenerator: (request) => `caller:${callerOf(request)?.id ?? ''}`,
    max: callerBudget,
    timeWindow: settings.windowMs
  })

  const usernames = new WeakMap<FastifyRequest, string>()
  const loginPairs = app.createRateLimit({
    keyGenerator: (request) => `login:${request.ip}:${usernames.get(request) ?? ''}`,
    max: settings.loginMax,
    timeWindow: settings.loginWindowMs
  })
  const loginAddresses = app.createRateLimit({
    keyGenerator: (request) => `login-address:${request.ip}`,
    max: settings.loginMax * LOGIN_ADDRESS_FACTOR,
    timeWindow: settings.loginWindowMs
  })

  return {
    async charge (request, reply, caller) {
      if (settings.max === 0) return
      await apply(callers, withCaller(request, caller), reply, `rate limit exceeded for ${caller.kind === 'apiKey' ? 'this API key' : 'this account'}`)
    },
    async chargeLogin (request, reply, username) {
      if (settings.loginMax === 0) return
      usernames.set(request, username)
      await apply(loginAddresses, request, reply, 'too many login attempts from this address')
      await apply(loginPairs, request, reply, 'too many login attempts for this username')
    }
  }
}
