import fastifyRateLimit from '@fastify/rate-limit'
import { type Caller, isDomainError } from '@people-service/domain'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

export interface RateLimitSettings {
  /** Requests per window per caller; 0 switches per-caller limits off. */
  max: number
  windowMs: number
  /** Failed logins per window per client address and username; 0 switches the login limit off. */
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
   * Counts a request against the caller's budget and, for a key, its
   * account's; throws 429 past either. The `RateLimit-*` headers (of the
   * budget closer to running out) go on `reply` when there is one (a
   * subscription over WebSocket has none).
   */
  charge(request: FastifyRequest, reply: FastifyReply | undefined, caller: Caller): Promise<void>
  /**
   * Runs a password check (`attempt`) under the login limits: 429 before it
   * runs when the client address, or the address with this username, has
   * used up its failed attempts. Only a failure (INVALID_CREDENTIALS) is
   * counted, so many people logging in from one office address never lock
   * each other out.
   */
  guardLogin<T>(request: FastifyRequest, reply: FastifyReply, username: string, attempt: () => Promise<T>): Promise<T>
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

// The limiter's call options, made once rather than per request.
const COUNT = { increment: true } as const
const READ = { increment: false } as const

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

  type Outcome = Exclude<Awaited<ReturnType<Limiter>>, { isAllowed: true }>

  /** Counts one request against a budget (or, given READ, only reads it); undefined when the store failed. */
  const consume = async (limiter: Limiter, request: FastifyRequest, how: { increment: boolean } = COUNT): Promise<Outcome | undefined> => {
    try {
      const result = await limiter(request, how)
      return result.isAllowed ? undefined : result
    } catch (error) {
      storeFailed(request, error)
      return undefined
    }
  }

  const show = (reply: FastifyReply | undefined, outcome: Outcome): void => {
    reply?.header('ratelimit-limit', outcome.max)
    reply?.header('ratelimit-remaining', outcome.remaining)
    reply?.header('ratelimit-reset', outcome.ttlInSeconds)
  }

  const refuse = (reply: FastifyReply | undefined, outcome: Outcome, what: string): never => {
    reply?.header('retry-after', outcome.ttlInSeconds)
    throw new RateLimitedError(`${what}: ${outcome.max} requests per ${Math.round(outcome.timeWindow / 1000)} s; retry in ${outcome.ttlInSeconds} s`, outcome.ttlInSeconds)
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
  // A key has a budget of its own (its rateLimit, else the default); every
  // request through it also counts against its account's, so an account's
  // throughput does not grow with the number of keys it makes.
  const keys = app.createRateLimit({
    keyGenerator: (request) => `caller:${callerOf(request)?.id ?? ''}`,
    max: (request) => callerOf(request)?.rateLimit ?? settings.max,
    timeWindow: settings.windowMs
  })
  const accounts = app.createRateLimit({
    keyGenerator: (request) => `caller:${callerOf(request)?.accountId ?? ''}`,
    max: settings.max,
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

  // Login attempts running on this instance, per address and per address + username.
  const running = new Map<string, number>()
  const join = (line: string): number => {
    const ahead = running.get(line) ?? 0
    running.set(line, ahead + 1)
    return ahead
  }
  const leave = (line: string): void => {
    const left = (running.get(line) ?? 1) - 1
    if (left === 0) running.delete(line)
    else running.set(line, left)
  }

  return {
    async charge (request, reply, caller) {
      if (settings.max === 0) return
      const view = withCaller(request, caller)
      if (caller.kind === 'account') {
        const outcome = await consume(accounts, view)
        if (outcome === undefined) return
        show(reply, outcome)
        if (outcome.isExceeded) refuse(reply, outcome, 'rate limit exceeded for this account')
        return
      }
      // The key first: a key past its own budget does not use up its account's.
      const key = await consume(keys, view)
      if (key?.isExceeded === true) {
        show(reply, key)
        refuse(reply, key, 'rate limit exceeded for this API key')
      }
      const account = await consume(accounts, view)
      const tighter = key === undefined || (account !== undefined && account.remaining < key.remaining) ? account : key
      if (tighter === undefined) return
      show(reply, tighter)
      if (account?.isExceeded === true) refuse(reply, account, 'rate limit exceeded for the account of this API key')
    },
    async guardLogin (request, reply, username, attempt) {
      if (settings.loginMax === 0) return attempt()
      usernames.set(request, username)
      // Attempts still running have not been counted yet: without this, a
      // burst of parallel guesses would all read the same count and all be
      // let through. Each takes its place in line synchronously, before any
      // await, and is let through only while the budget covers those ahead.
      const budgets = [
        { limiter: loginAddresses, line: `address:${request.ip}`, what: 'too many failed logins from this address' },
        { limiter: loginPairs, line: `pair:${request.ip}:${username}`, what: 'too many failed logins for this username' }
      ]
      const places = budgets.map(({ line }) => join(line))
      try {
        for (const [i, { limiter, what }] of budgets.entries()) {
          const outcome = await consume(limiter, request, READ)
          if (outcome !== undefined && outcome.remaining <= places[i]!) refuse(reply, outcome, what)
        }
        return await attempt()
      } catch (error) {
        if (isDomainError(error) && error.code === 'INVALID_CREDENTIALS') {
          await Promise.all([consume(loginAddresses, request), consume(loginPairs, request)])
        }
        throw error
      } finally {
        for (const { line } of budgets) leave(line)
      }
    }
  }
}
