import { validationError } from '../errors.js'

/** Largest page each list may return; adapters may ask for less. */
export const LIST_LIMITS = {
  people: { default: 100, max: 1000 },
  friends: { default: 10, max: 100 },
  inbox: { default: 20, max: 100 },
  accounts: { default: 100, max: 1000 },
  // As many as a page holds by default: a listing was all of them, up to 1,000.
  apiKeys: { default: 1000, max: 1000 },
  webhooks: { default: 100, max: 100 },
  deliveries: { default: 20, max: 100 }
} as const

export const checkLimit = (limit: number, max: number, field = 'limit'): number => {
  if (!Number.isInteger(limit) || limit < 0 || limit > max) {
    throw validationError(field, `must be an integer from 0 to ${max}`)
  }
  return limit
}
