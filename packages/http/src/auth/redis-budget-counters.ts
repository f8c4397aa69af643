import type { BudgetCounters, Tally } from './budget-counters.js'

/**
 * The part of an ioredis client the counters (and the login attempts) use: a script defined once and
 * then run by its digest (ioredis sends the whole script only the first time
 * on a connection, and again when Redis has forgotten it).
 */
export interface RedisScripting {
  defineCommand(name: string, definition: { lua: string }): void
  chargeBudgets?: (...arguments_: Array<string | number>) => Promise<unknown>
  enterLogin?: (...arguments_: Array<string | number>) => Promise<unknown>
  leaveLogin?: (...arguments_: Array<string | number>) => Promise<unknown>
}

/*
 * KEYS: one or two budgets' counters. ARGV: units, window (ms), then each
 * budget's maximum. Every budget must be able to pay, or none is charged. A
 * counter lives for one window from its first unit (SET … PX); a key without
 * an expiry (left by anything else) counts as a window that has ended.
 * Answers the index of the budget that refused (0: charged), then each
 * budget's units used and milliseconds left in its window.
 */
const CHARGE = `
local units = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local used, left, refused = {}, {}, 0
for i = 1, #KEYS do
  left[i] = redis.call('PTTL', KEYS[i])
  if left[i] < 0 then
    used[i], left[i] = 0, window
  else
    used[i] = tonumber(redis.call('GET', KEYS[i]))
  end
  if refused == 0 and used[i] + units > tonumber(ARGV[2 + i]) then refused = i end
end
if refused == 0 and units > 0 then
  for i = 1, #KEYS do
    if used[i] == 0 then
      redis.call('SET', KEYS[i], units, 'PX', window)
      used[i] = units
    else
      used[i] = redis.call('INCRBY', KEYS[i], units)
    end
  end
end
local answer = { refused }
for i = 1, #KEYS do
  answer[2 * i] = used[i]
  answer[2 * i + 1] = left[i]
end
return answer
`

const isCounts = (reply: unknown): reply is number[] => Array.isArray(reply) && reply.every((value) => typeof value === 'number')

/**
 * Counters in Redis, shared by every instance of a deployment: one round
 * trip per charge, atomic (a script runs alone), keys under `prefix`. With
 * two budgets, both keys go to one script, so a Redis Cluster would need
 * them in one hash slot; the service runs against a single Redis.
 */
export const redisBudgetCounters = (client: RedisScripting, prefix: string, windowMs: number): BudgetCounters => {
  client.defineCommand('chargeBudgets', { lua: CHARGE })
  const chargeBudgets = client.chargeBudgets
  if (chargeBudgets === undefined) throw new Error('the Redis client did not define the chargeBudgets script')

  const tallyOf = (reply: unknown, two: boolean): Tally => {
    if (!isCounts(reply) || reply.length !== (two ? 5 : 3)) throw new Error('unexpected answer from the chargeBudgets script')
    const now = Date.now()
    const [refused, usedOne, leftOne, usedTwo = 0, leftTwo = 0] = reply
    return {
      refusedBy: refused === 1 ? 1 : refused === 2 ? 2 : 0,
      first: { used: usedOne!, resetAt: now + leftOne! },
      second: two ? { used: usedTwo, resetAt: now + leftTwo } : undefined
    }
  }

  return {
    async charge (first, firstMax, second, secondMax, units) {
      const reply = second === undefined
        ? await chargeBudgets.call(client, 1, prefix + first, units, windowMs, firstMax)
        : await chargeBudgets.call(client, 2, prefix + first, prefix + second, units, windowMs, firstMax, secondMax)
      return tallyOf(reply, second !== undefined)
    }
  }
}
