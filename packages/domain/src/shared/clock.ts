/** Port: where the time comes from, so tests can pin it. */
export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }
