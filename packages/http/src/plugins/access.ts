import { type AccessUseCases, type Caller, createAccessUseCases, type Ports, unauthenticated } from '@people-service/domain'
import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler } from 'fastify'
import { installAccessTokens, type AccessTokens, type TokenSettings } from '../auth/access-tokens.js'
import { createAuthenticator } from '../auth/authenticator.js'
import { readCredentials } from '../auth/credentials.js'
import { authorize, check, isOperation, type Operation, operationOfUrl, POLICY, type Requirement } from '../auth/policy.js'
import { asCaller, HASHING_DEFAULTS, hashingTurns, type HashingSettings } from '../auth/hashing-turns.js'
import { installRateLimits, RATE_LIMIT_DEFAULTS, type RateLimits, type RateLimitSettings } from '../auth/rate-limits.js'

export interface AccessOptions {
  tokens: TokenSettings
  limits?: Partial<RateLimitSettings>
  /**
   * How long a verified API key or account state is trusted without a
   * database read (absent revocations, which end it at once).
   */
  apiKeyCacheTtlMs?: number
  /** A bearer token that may read GET /metrics without an account (a Prometheus scraper). */
  metricsToken?: string
  /** How often counted API key usage is written to the database. */
  usageFlushIntervalMs?: number
  /** Live API keys one account may own (MAX_KEYS_PER_ACCOUNT). */
  maxKeysPerAccount?: number
  /** The password hashing queue (auth/hashing-turns.ts). */
  hashing?: Partial<HashingSettings>
}

/** What other adapters (GraphQL, subscriptions) need to apply the same rules. */
export interface Access {
  /**
   * Verifies credentials given as header values (or a connection-init
   * payload's fields). `revocationVersion`: the revocation version as read
   * just before, for checking many credentials at once on one read.
   */
  authenticate(credentials: { authorization?: string, apiKey?: string }, revocationVersion?: string): Promise<Caller>
  authorize: typeof authorize
  /**
   * Counts a request the hook did not see (a subscription started over
   * WebSocket): the key's usage, and `units` requests against the caller's
   * budget (RateLimits.charge). Throws 429 RATE_LIMITED when the budget has
   * fewer than `units` left, and then charges nothing.
   */
  charge(request: FastifyRequest, caller: Caller, units?: number): Promise<void>
  tokens: AccessTokens
  limits: RateLimits
  useCases: AccessUseCases
}

declare module 'fastify' {
  interface FastifyInstance {
    access: Access
  }
}

/** Node sets `upgrade` on a request it hands to the server's 'upgrade' listeners. */
const isWebSocketUpgrade = (request: FastifyRequest): boolean =>
  request.method === 'GET' &&
  (request.raw as { upgrade?: unknown }).upgrade === true &&
  request.headers.upgrade?.toLowerCase() === 'websocket'

// Set on every response to an authenticated request: what a caller is shown
// is theirs alone, and no cache between them and us may keep it.
const NO_STORE = 'no-store'

/**
 * Whether an Authorization header presents the metrics token; compared as
 * digests in constant time, so neither timing nor length tells how much of
 * a guess was right.
 */
const metricsTokenCheck = (token: string | undefined): (authorization: string | undefined) => boolean => {
  if (token === undefined || token === '') return () => false
  const expected = createHash('sha256').update(`Bearer ${token}`).digest()
  return (authorization) => authorization !== undefined &&
    timingSafeEqual(createHash('sha256').update(authorization).digest(), expected)
}

const ANY_CALLER: Requirement = { access: 'caller' }
const UNCOUNTED_PUBLIC: ReadonlySet<Operation> = new Set(['auth.login', 'health.live', 'health.ready'])
const WARN_EVERY_MS = 10_000

const loginNameOf = (body: unknown): string | undefined => {
  const username = typeof body === 'object' && body !== null && 'username' in body ? body.username : undefined
  return typeof username === 'string' ? username.toLowerCase() : undefined
}

/** The caller the access hook verified; routes behind a protected operation always have one. */
export const callerOf = (request: FastifyRequest): Caller => {
  if (request.caller === undefined) throw unauthenticated()
  return request.caller
}

/**
 * Authentication, usage counting, per-caller limits and authorization for
 * every route, in an onRequest hook: before the body is read, so
 * unauthenticated callers cost no parsing. Which rule applies comes from the
 * policy table through the route's `config.operation`, looked up once when
 * the route is registered, which gives the route a hook bound to its rule;
 * a route with no row fails the start, so nothing is ever public by omission.
 */
export const installAccess = async (app: FastifyInstance, ports: Ports, options: AccessOptions): Promise<Access> => {
  const limitSettings: RateLimitSettings = { ...RATE_LIMIT_DEFAULTS, ...options.limits }
  let lastWarning = 0
  const passwords = hashingTurns(ports.passwords, { ...HASHING_DEFAULTS, ...options.hashing })
  const useCases = createAccessUseCases({ ...ports, passwords }, {
    ...(limitSettings.max === 0 ? {} : { maxRateLimitWithoutAdmin: limitSettings.max }),
    ...(options.maxKeysPerAccount === undefined ? {} : { maxKeysPerAccount: options.maxKeysPerAccount }),
    credentialCache: {
      ...(options.apiKeyCacheTtlMs === undefined ? {} : { ttlMs: options.apiKeyCacheTtlMs }),
      onRevocationsUnavailable (error) {
        if (Date.now() - lastWarning < WARN_EVERY_MS) return
        lastWarning = Date.now()
        app.log.warn({ err: error }, 'key revocations unreadable: API keys are read from the database on every request')
      }
    }
  })
  const tokens = await installAccessTokens(app, options.tokens)
  const limits = installRateLimits(limitSettings)
  const authenticateCredentials = createAuthenticator({
    tokens,
    callers: { apiKey: useCases.authenticateApiKey, accessToken: useCases.authenticateToken }
  })
  const isMetricsToken = metricsTokenCheck(options.metricsToken)

  /**
   * Authenticates, counts and charges the caller, then checks the
   * requirement. At once when the credential is known and the budget in
   * process (the usual case: no promise, no turn of the event loop); else a
   * promise. Throws, or rejects with, the refusal.
   */
  const admit = (request: FastifyRequest, reply: FastifyReply, requirement: Requirement, what: string): void | Promise<void> => {
    const caller = authenticateCredentials(readCredentials({ authorization: request.headers.authorization, apiKey: request.headers['x-api-key'] }))
    return caller instanceof Promise
      ? caller.then((verified) => allow(request, reply, verified, requirement, what))
      : allow(request, reply, caller, requirement, what)
  }
  const allow = (request: FastifyRequest, reply: FastifyReply, caller: Caller, requirement: Requirement, what: string): void | Promise<void> => {
    request.caller = caller
    reply.header('cache-control', NO_STORE)
    if (caller.kind === 'apiKey') useCases.usageMeter.record(caller.id)
    const charged = limits.charge(request, reply, caller)
    if (charged === undefined) {
      check(caller, requirement, what)
      return
    }
    return charged.then(() => { check(caller, requirement, what) })
  }
  /** Runs `admit` and tells Fastify: at once when it settled at once, else when its promise does. */
  const answer = (request: FastifyRequest, reply: FastifyReply, requirement: Requirement, what: string, done: HookHandlerDoneFunction): void => {
    let settled: void | Promise<void>
    try {
      settled = admit(request, reply, requirement, what)
    } catch (error) {
      done(error as Error)
      return
    }
    if (settled === undefined) done()
    else settled.then(() => done(), done)
  }

  /**
   * The hook of one route, its rule looked up once, when the route is
   * registered. Browsers cannot set headers on a WebSocket: subscriptions
   * present their credentials in the graphql-ws connection-init payload, and
   * the GraphQL adapter authenticates them there with
   * `app.access.authenticate`. Only a real upgrade (Node flags it;
   * @fastify/websocket then runs the WebSocket handler, never the HTTP one)
   * passes: an HTTP request that merely carries `Upgrade: websocket` is
   * authenticated like any other.
   */
  const guard = (requirement: Extract<Requirement, { access: 'caller' }>, operation: Operation, whatOf: (request: FastifyRequest) => string): onRequestHookHandler =>
    (request, reply, done) => {
      if (operation === 'graphql' && isWebSocketUpgrade(request)) return done()
      if (requirement.metricsToken === true && isMetricsToken(request.headers.authorization)) {
        reply.header('cache-control', NO_STORE)
        return done()
      }
      answer(request, reply, requirement, whatOf(request), done)
    }

  /** How a refusal names a request to a path no route serves as such. */
  const pathOf = (request: FastifyRequest): string => `${request.method} ${request.url.split('?')[0]}`
  const anyCaller = (whatOf: (request: FastifyRequest) => string): onRequestHookHandler =>
    (request, reply, done) => { answer(request, reply, ANY_CALLER, whatOf(request), done) }

  const publicPage: onRequestHookHandler = (request, reply, done) => {
    let charged: void | Promise<void>
    try {
      charged = limits.chargePublic(request, reply)
    } catch (error) {
      done(error as Error)
      return
    }
    if (charged === undefined) done()
    else charged.then(() => done(), done)
  }

  const publicUrls = new Set<string>()
  app.addHook('onRoute', (route) => {
    const { url } = route
    const methods = [route.method].flat()
    // How refusals name the route: made once when it has one method.
    const only = `${String(methods[0])} ${url}`
    const whatOf = methods.length === 1 ? () => only : (request: FastifyRequest) => `${request.method} ${url}`
    const hooks = [route.onRequest ?? []].flat()
    if (route.config?.methodNotAllowed) {
      // A 405 answers like the path it is about (public paths without
      // credentials); the helpers are registered after every route, so the
      // set of public paths is complete by then.
      if (!publicUrls.has(url)) route.onRequest = [...hooks, anyCaller(whatOf)]
      return
    }
    if (url === '*') {
      // A plugin's catch-all (CORS' OPTIONS *, whose preflights its own hook
      // answers first) stands for every path: credentials first, as for an
      // unknown path.
      route.onRequest = [...hooks, anyCaller(pathOf)]
      return
    }
    const operation = route.config?.operation ?? operationOfUrl(url)
    if (!isOperation(operation)) {
      throw new Error(`${String(route.method)} ${url} has no row in the policy table (auth/policy.ts): set config.operation`)
    }
    const requirement = POLICY[operation]
    if (requirement.access === 'public') {
      publicUrls.add(url)
      // Probes (an orchestrator's) and the login (limits of its own) aside,
      // public pages count against their client address.
      if (!UNCOUNTED_PUBLIC.has(operation)) route.onRequest = [...hooks, publicPage]
      return
    }
    route.onRequest = [...hooks, guard(requirement, operation, whatOf)]
  })

  // An unknown path (404) needs credentials first, so paths cannot be probed
  // anonymously; every route has its own hook above.
  app.addHook('onRequest', (request, reply, done) => {
    if (!request.is404) return done()
    answer(request, reply, ANY_CALLER, pathOf(request), done)
  })

  // Whose turn a password hash takes: the account (its keys too); for a
  // login, the username tried (people behind one address log in at once;
  // one address guessing many usernames meets the login limits); set
  // around the handler and all it awaits.
  app.addHook('preHandler', (request, _reply, done) => {
    asCaller(request.caller === undefined ? `login:${loginNameOf(request.body) ?? request.ip}` : `account:${request.caller.accountId}`, done)
  })

  const flush = async (): Promise<void> => {
    await useCases.usageMeter.flush().catch((error: unknown) => {
      app.log.warn({ err: error }, 'could not store API key usage; it is kept for the next attempt')
    })
  }
  // flush() reports its own failures, so the promise never rejects.
  const timer = setInterval(flush, options.usageFlushIntervalMs ?? 30_000)
  timer.unref()
  app.addHook('onClose', async () => {
    clearInterval(timer)
    await flush()
  })

  const access: Access = {
    authenticate: async ({ authorization, apiKey }, revocationVersion) => authenticateCredentials(readCredentials({ authorization, apiKey }), revocationVersion),
    authorize,
    async charge (request, caller, units = 1) {
      if (caller.kind === 'apiKey') useCases.usageMeter.record(caller.id)
      await limits.charge(request, undefined, caller, units)
    },
    tokens,
    limits,
    useCases
  }
  app.decorate('access', access)
  return access
}
