import { type Caller, isDomainError } from '@people-service/domain'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { type BudgetCounters, type BudgetWindow, detached, type ImmediateBudgetCounters, memoryBudgetCounters, type Tally } from './budget-counters.js'
import { clientOf } from './client-address.js'
import { type LoginAttempts, type LoginEntry, memoryLoginAttempts, redisLoginAttempts } from './login-attempts.js'
import { redisBudgetCounters, type RedisScripting } from './redis-budget-counters.js'

export interface RateLimitSettings {
  /** Requests per window per caller; 0 switches per-caller limits off. */
  max: number
  windowMs: number
  /** Failed logins per window per username (per client address: LOGIN_ADDRESS_FACTOR times as many); 0 switches the login limit off. */
  loginMax: number
  loginWindowMs: number
  /** Requests per window (`windowMs`) per client address on public pages (PUBLIC_RATE_LIMIT_MAX); 0 switches it off. */
  publicMax: number
  /** An ioredis client: counters shared by every instance. Absent: in-process counters. */
  redis?: RedisScripting
  /** Prefix of every counter key in Redis, one per deployment. */
  redisPrefix?: string
}

export const RATE_LIMIT_DEFAULTS: RateLimitSettings = { max: 1000, windowMs: 60_000, loginMax: 10, loginWindowMs: 15 * 60_000, publicMax: 600 }

// One address may try this many usernames' worth of attempts: stops spraying
// one password across many accounts, while a shared address (an office NAT)
// still leaves room for its people.
const LOGIN_ADDRESS_FACTOR = 5

// A password check costs 170 ms of CPU (scrypt, 2-core AMD EPYC), a thousand
// requests' worth: one account logging in over and over in parallel cut
// everyone else's throughput to a third, uncounted, since only failures
// were. Every check is paid for, per username, whatever its outcome: this
// many times the failures allowed (50 a window by default, one every 18 s;
// a client needs one per token lifetime).
export const LOGIN_CHECKS_FACTOR = 5

export interface RateLimits {
  /**
   * Charges `units` requests to the caller's budget and, for a key, to its
   * account's as well, atomically; throws 429 RATE_LIMITED (with
   * `Retry-After`) when either has fewer than `units` left, and then charges
   * nothing. The `RateLimit-*` headers (of the budget closer to running out)
   * go on `reply` when there is one (a subscription over WebSocket has none).
   * With in-process counters it answers at once (returns nothing, throws
   * when refused); with shared ones it returns a promise.
   */
  charge(request: FastifyRequest, reply: FastifyReply | undefined, caller: Caller, units?: number): void | Promise<void>
  /**
   * Runs a password check (`attempt`) under the login limits: 429 before it
   * runs when the client address, or this username from any address, has
   * used up its failed attempts, or the username its password checks. Only
   * a failure (INVALID_CREDENTIALS) counts against the failed attempts (an
   * attempt still running, on this instance or another, holds a place until
   * it ends), so many people logging in from one office address never lock
   * each other out; every check counts against its username's checks, so
   * one account cannot spend the service's CPU on logins.
   */
  guardLogin<T>(request: FastifyRequest, reply: FastifyReply, username: string, attempt: () => Promise<T>): Promise<T>
  /**
   * Charges a request to a public page (docs, OpenAPI, GraphiQL, `/`) to its
   * client address: anyone may ask, so the address is the budget. Throws 429
   * past PUBLIC_RATE_LIMIT_MAX.
   */
  chargePublic(request: FastifyRequest, reply: FastifyReply): void | Promise<void>
}

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

/** Whole seconds until a window ends, never 0: a client told to retry in 0 s would spin. */
const secondsLeft = (window: BudgetWindow, now: number): number => Math.max(1, Math.ceil((window.resetAt - now) / 1000))

const show = (reply: FastifyReply | undefined, max: number, window: BudgetWindow, now: number): void => {
  reply?.header('ratelimit-limit', max)
  reply?.header('ratelimit-remaining', Math.max(0, max - window.used))
  reply?.header('ratelimit-reset', secondsLeft(window, now))
}

/**
 * The window a refused login waits for: its failures' when they spent the
 * budget; when they left room, attempts still running took it, and those end
 * within a second, not with the window.
 */
const retryOf = (failures: BudgetWindow, max: number): BudgetWindow =>
  failures.used < max ? { used: failures.used, resetAt: Date.now() } : failures

const refuse = (reply: FastifyReply | undefined, max: number, window: BudgetWindow, windowMs: number, units: number, what: string, now: number): never => {
  const retryAfter = secondsLeft(window, now)
  reply?.header('retry-after', retryAfter)
  const budget = `${max} requests per ${Math.round(windowMs / 1000)} s`
  const cost = units <= 1 ? '' : units > max ? `; this costs ${units}, more than the whole budget` : `; this costs ${units} and ${Math.max(0, max - window.used)} are left`
  throw new RateLimitedError(`${what}: ${budget}${cost}; retry in ${retryAfter} s`, retryAfter)
}

/** Where the counters named `name` live in Redis. */
const redisKeys = (settings: RateLimitSettings, name: string): string => `${settings.redisPrefix ?? 'people-service:'}rate-limit:${name}:`

const countersOf = (settings: RateLimitSettings, name: string, windowMs: number): BudgetCounters =>
  settings.redis === undefined
    ? memoryBudgetCounters(windowMs)
    : redisBudgetCounters(settings.redis, redisKeys(settings, name), windowMs)

/**
 * Per-caller budgets, applied by the access hook once the caller is known,
 * and the login limits: fixed windows of units in budget counters (in
 * process, or in Redis shared by every instance). A request costs one unit;
 * a GraphQL operation as many as its cost asks. @fastify/rate-limit, which
 * this replaced, counts one per call only, needs a request object per
 * budget to key it, and took one Redis round trip per budget.
 *
 * A refused charge consumes nothing: what did not run took no capacity, a
 * caller refused an expensive operation can still afford a cheaper one, and
 * no budget goes below zero (nor do the `RateLimit-Remaining` it shows).
 *
 * When the store (Redis) cannot be reached, or does not answer in time,
 * requests are let through without a budget and a warning is logged at most
 * every 10 s: budgets protect capacity, not data, and authentication and
 * authorization still apply in full, so an outage of the counter store should
 * not become an outage of the API. The login limits do protect data (they
 * stop password guessing, and each check costs a thousand requests' CPU):
 * meanwhile they count in this process, per instance, which with N instances
 * allows N times as many attempts, rather than any number.
 */
export const installRateLimits = (settings: RateLimitSettings): RateLimits => {
  const { max, windowMs, loginMax, loginWindowMs, publicMax } = settings
  const callers = countersOf(settings, 'caller', windowMs)
  const addresses = countersOf(settings, 'public', windowMs)
  const logins: LoginAttempts = settings.redis === undefined
    ? memoryLoginAttempts(loginWindowMs)
    : redisLoginAttempts(settings.redis, redisKeys(settings, 'login'), loginWindowMs)
  const addressMax = loginMax * LOGIN_ADDRESS_FACTOR
  const checks = countersOf(settings, 'login-check', loginWindowMs)
  const checksMax = loginMax * LOGIN_CHECKS_FACTOR
  // Where the login limits count while the store cannot be reached.
  const localLogins = memoryLoginAttempts(loginWindowMs)
  const localChecks = memoryBudgetCounters(loginWindowMs)

  let lastWarning = 0
  const storeFailed = (request: FastifyRequest, error: unknown): void => {
    const now = Date.now()
    if (now - lastWarning < WARN_EVERY_MS) return
    lastWarning = now
    request.log.warn({ err: error }, 'rate-limit store unavailable: requests are not being limited, failed logins are counted on this instance only')
  }

  /** The store's answer, or undefined when it could not be reached. */
  const storeAnswer = async <T>(request: FastifyRequest, pending: T | Promise<T>): Promise<T | undefined> => {
    try {
      return await pending
    } catch (error) {
      storeFailed(request, error)
      return undefined
    }
  }

  /**
   * Lets a login attempt in through the store, or, when it cannot be
   * reached, through this instance's own counts; its leaving goes to the
   * same place, and a store that fails then is logged: the attempt stops
   * counting as running when Redis drops it (LOGIN_RUNNING_MS).
   */
  const enterLogin = async (request: FastifyRequest, address: string, user: string): Promise<LoginEntry> => {
    const pending = logins.enter(address, addressMax, user, loginMax)
    const entry = (pending instanceof Promise ? await storeAnswer(request, pending) : pending) ?? localLogins.enter(address, addressMax, user, loginMax)
    return {
      tally: entry.tally,
      async leave (failed) {
        try {
          await entry.leave(failed)
        } catch (error) {
          storeFailed(request, error)
          // Counted on this instance rather than nowhere.
          if (failed) localLogins.enter(address, addressMax, user, loginMax).leave(true)
        }
      }
    }
  }

  /**
   * Charges login counters: in process at once; through the store, or, when
   * it cannot be reached, through `local`, this instance's own counters.
   */
  const chargeLogin = (
    request: FastifyRequest, shared: BudgetCounters, local: ImmediateBudgetCounters,
    first: string, firstMax: number, second: string | undefined, secondMax: number, units: number
  ): Tally | Promise<Tally> => {
    const pending = shared.charge(first, firstMax, second, secondMax, units)
    if (!(pending instanceof Promise)) return pending
    return storeAnswer(request, pending).then((tally) => tally ?? detached(local.charge(first, firstMax, second, secondMax, units)))
  }

  /** Shows the budget closer to running out on the reply, or throws 429 for the one that refused. */
  const settle = (reply: FastifyReply | undefined, { refusedBy, first, second }: Tally, firstMax: number, isKey: boolean, units: number): void => {
    const now = Date.now()
    if (refusedBy === 1) {
      show(reply, firstMax, first, now)
      refuse(reply, firstMax, first, windowMs, units, isKey ? 'rate limit exceeded for this API key' : 'rate limit exceeded for this account', now)
    }
    if (second === undefined) return show(reply, firstMax, first, now)
    if (refusedBy === 2) {
      show(reply, max, second, now)
      refuse(reply, max, second, windowMs, units, 'rate limit exceeded for the account of this API key', now)
    }
    if (max - second.used < firstMax - first.used) show(reply, max, second, now)
    else show(reply, firstMax, first, now)
  }

  return {
    charge (request, reply, caller, units = 1) {
      if (max === 0) return
      // A key has a budget of its own (its rateLimit, else the default); every
      // request through it also counts against its account's, so an account's
      // throughput does not grow with the number of keys it makes.
      const isKey = caller.kind === 'apiKey'
      const firstMax = isKey ? caller.rateLimit ?? max : max
      const pending = isKey ? callers.charge(caller.id, firstMax, caller.accountId, max, units) : callers.charge(caller.id, max, undefined, 0, units)
      // In process the tally is ready and reused by the next charge: settled
      // here, with nothing allocated and no promise. From Redis it is a
      // promise of a fresh one.
      if (!(pending instanceof Promise)) return settle(reply, pending, firstMax, isKey, units)
      return storeAnswer(request, pending).then((tally) => {
        if (tally !== undefined) settle(reply, tally, firstMax, isKey, units)
      })
    },

    chargePublic (request, reply) {
      if (publicMax === 0) return
      const settlePublic = (tally: Tally): void => {
        if (tally.refusedBy !== 1) return
        // Headers on the refusal only: a public page's documented headers stay as they are.
        const now = Date.now()
        show(reply, publicMax, tally.first, now)
        refuse(reply, publicMax, tally.first, windowMs, 1, 'rate limit exceeded for this address on public pages', now)
      }
      const pending = addresses.charge(`address:${clientOf(request.ip)}`, publicMax, undefined, 0, 1)
      if (!(pending instanceof Promise)) return settlePublic(pending)
      return storeAnswer(request, pending).then((tally) => {
        if (tally !== undefined) settlePublic(tally)
      })
    },

    async guardLogin (request, reply, username, attempt) {
      if (loginMax === 0) return attempt()
      // Guessing one account's password is bounded per username whatever the
      // number of addresses it comes from; an address as a whole gets more
      // (addressMax), so a busy office behind it is not locked out by a few
      // colleagues' typos.
      const address = `address:${clientOf(request.ip)}`
      const user = `username:${username}`
      const entry = await enterLogin(request, address, user)
      const { refusedBy, address: fromAddress, username: forUser } = entry.tally
      if (refusedBy === 1) refuse(reply, addressMax, retryOf(fromAddress, addressMax), loginWindowMs, 1, 'too many failed logins from this address', Date.now())
      if (refusedBy === 2) refuse(reply, loginMax, retryOf(forUser, loginMax), loginWindowMs, 1, 'too many failed logins for this username', Date.now())
      let failed = false
      try {
        // Paid before it runs, so parallel checks never outrun the budget.
        const paid = chargeLogin(request, checks, localChecks, user, checksMax, undefined, 0, 1)
        const check = paid instanceof Promise ? await paid : paid
        if (check.refusedBy === 1) refuse(reply, checksMax, check.first, loginWindowMs, 1, 'too many logins for this username', Date.now())
        return await attempt()
      } catch (error) {
        failed = isDomainError(error) && error.code === 'INVALID_CREDENTIALS'
        throw error
      } finally {
        await entry.leave(failed)
      }
    }
  }
}
