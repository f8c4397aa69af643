import { randomUUID } from 'node:crypto'
import { type BudgetWindow, memoryBudgetCounters } from './budget-counters.js'
import type { RedisScripting } from './redis-budget-counters.js'

/** What an attempt found at the door: the budget that refused it (0: none; 1: the address's, 2: the username's) and each budget's failures. */
export interface LoginTally {
  refusedBy: 0 | 1 | 2
  address: BudgetWindow
  username: BudgetWindow
}

/** An attempt let in; `leave` once it has ended, saying whether it failed. */
export interface LoginEntry {
  tally: LoginTally
  leave(failed: boolean): void | Promise<void>
}

/**
 * Failed logins per client address and per username, in fixed windows, and
 * the attempts running now. An attempt is let in only while the failures and
 * the attempts running, together, leave room in both budgets: one still
 * running may yet fail, so a burst of parallel guesses cannot all find the
 * same count and all be let through. It counts as a failure only once it has
 * failed, so many people logging in from one address never lock each other
 * out. A refused attempt changes nothing.
 */
export interface LoginAttempts {
  enter(address: string, addressMax: number, username: string, usernameMax: number): LoginEntry | Promise<LoginEntry>
}

/** Login attempts counted in this process: they answer at once. */
export interface ImmediateLoginAttempts extends LoginAttempts {
  enter(address: string, addressMax: number, username: string, usernameMax: number): LoginEntry
}

const nothing = (): void => {}

/** In this process: the attempts running are counted exactly. */
export const memoryLoginAttempts = (windowMs: number): ImmediateLoginAttempts => {
  const failures = memoryBudgetCounters(windowMs)
  const running = new Map<string, number>()
  const runningFor = (line: string): number => running.get(line) ?? 0
  const join = (line: string): void => { running.set(line, runningFor(line) + 1) }
  const part = (line: string): void => {
    const left = runningFor(line) - 1
    if (left <= 0) running.delete(line)
    else running.set(line, left)
  }

  return {
    enter (address, addressMax, username, usernameMax) {
      // Read (0 units) and copied: the counters reuse their tally.
      const read = failures.charge(address, addressMax, username, usernameMax, 0)
      const fromAddress = { ...read.first }
      const forUsername = { ...(read.second ?? read.first) }
      const refusedBy = fromAddress.used + runningFor(address) >= addressMax ? 1 : forUsername.used + runningFor(username) >= usernameMax ? 2 : 0
      const tally: LoginTally = { refusedBy, address: fromAddress, username: forUsername }
      if (refusedBy !== 0) return { tally, leave: nothing }
      join(address)
      join(username)
      return {
        tally,
        leave (failed) {
          part(address)
          part(username)
          if (failed) failures.charge(address, addressMax, username, usernameMax, 1)
        }
      }
    }
  }
}

/*
 * KEYS: the failures of the address, of the username; the attempts running
 * from the address, for the username (sorted sets of attempt ids by start
 * time). ARGV: this attempt's id, how long an attempt counts as running (ms),
 * the address's budget, the username's. Attempts older than that are dropped
 * first: one whose end never reached Redis (an instance that died, a
 * connection lost) stops counting then. Time is Redis's, the same for every
 * instance. Answers the budget that refused (0: none, and the attempt is
 * counted as running), then each budget's failures and ms left in its window.
 */
const ENTER = `
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local answer, refused = {}, 0
for i = 1, 2 do
  local failures, left = 0, 0
  local ttl = redis.call('PTTL', KEYS[i])
  if ttl > 0 then failures, left = tonumber(redis.call('GET', KEYS[i])), ttl end
  redis.call('ZREMRANGEBYSCORE', KEYS[i + 2], '-inf', now - tonumber(ARGV[2]))
  if refused == 0 and failures + redis.call('ZCARD', KEYS[i + 2]) >= tonumber(ARGV[2 + i]) then refused = i end
  answer[2 * i] = failures
  answer[2 * i + 1] = left
end
answer[1] = refused
if refused == 0 then
  for i = 3, 4 do
    redis.call('ZADD', KEYS[i], now, ARGV[1])
    redis.call('PEXPIRE', KEYS[i], ARGV[2])
  end
end
return answer
`

/*
 * KEYS: the attempts running from the address, for the username; the
 * failures of the address, of the username. ARGV: the attempt's id, 1 when it
 * failed, the failure window (ms). A failure counts in the window running
 * now, or starts one (a key without an expiry counts as ended, as the
 * request budgets' script has it).
 */
const LEAVE = `
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if ARGV[2] == '1' then
  for i = 3, 4 do
    if redis.call('PTTL', KEYS[i]) > 0 then redis.call('INCR', KEYS[i]) else redis.call('SET', KEYS[i], 1, 'PX', ARGV[3]) end
  end
end
return 0
`

/**
 * How long an attempt counts as running in Redis: well beyond a password
 * check (170 ms of scrypt), and a bound on how long one whose end never
 * reached Redis holds a place. One sent while Redis hung, and answered by
 * this instance's counts meanwhile, may still be run by Redis once it
 * resumes: it then holds a place this long, never counting as a failure.
 */
const LOGIN_RUNNING_MS = 10_000

const isCounts = (reply: unknown): reply is number[] =>
  Array.isArray(reply) && reply.length === 5 && reply.every((value) => typeof value === 'number')

/**
 * In Redis, shared by every instance: one round trip to enter, one to leave,
 * each atomic. The failure counters are the keys under `prefix` the login
 * limits always used; the attempts running are under `prefix` + `running:`.
 */
export const redisLoginAttempts = (client: RedisScripting, prefix: string, windowMs: number): LoginAttempts => {
  client.defineCommand('enterLogin', { lua: ENTER })
  client.defineCommand('leaveLogin', { lua: LEAVE })
  const { enterLogin, leaveLogin } = client
  if (enterLogin === undefined || leaveLogin === undefined) throw new Error('the Redis client did not define the login scripts')

  return {
    async enter (address, addressMax, username, usernameMax) {
      const id = randomUUID()
      const failures = [prefix + address, prefix + username]
      const running = [`${prefix}running:${address}`, `${prefix}running:${username}`]
      const reply = await enterLogin.call(client, 4, ...failures, ...running, id, LOGIN_RUNNING_MS, addressMax, usernameMax)
      if (!isCounts(reply)) throw new Error('unexpected answer from the enterLogin script')
      const now = Date.now()
      const [refused, fromAddress = 0, addressLeft = 0, forUsername = 0, usernameLeft = 0] = reply
      const tally: LoginTally = {
        refusedBy: refused === 1 ? 1 : refused === 2 ? 2 : 0,
        address: { used: fromAddress, resetAt: now + addressLeft },
        username: { used: forUsername, resetAt: now + usernameLeft }
      }
      if (tally.refusedBy !== 0) return { tally, leave: nothing }
      return {
        tally,
        async leave (failed) {
          await leaveLogin.call(client, 4, ...running, ...failures, id, failed ? 1 : 0, windowMs)
        }
      }
    }
  }
}
