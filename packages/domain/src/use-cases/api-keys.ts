import { API_KEY_LIMITS, type ApiKey, type ApiKeyView, checkKeyName, checkRateLimit, checkScopes, type NewApiKeyInput, toApiKeyView } from '../api-key/api-key.js'
import { newApiKeySecret } from '../api-key/api-key-secret.js'
import type { DailyUsage } from '../api-key/api-key-usage.js'
import type { UsageMeter } from '../api-key/usage-meter.js'
import { type Caller, hasScope } from '../caller/caller.js'
import { apiKeyData, changeEvents, subjects } from '../change/change-event.js'
import { apiKeyNotFound, forbidden, tooManyKeys } from '../errors.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'
import { decodeInstantCursor, instantKey, type Page, toPage } from '../shared/page.js'
import { checkLimit, LIST_LIMITS } from './limits.js'

export interface CreatedApiKey extends ApiKeyView {
  /** The key itself: shown once, stored only as a hash. */
  key: string
}

export interface ApiKeyUsageReport {
  id: string
  total: number
  byDay: DailyUsage[]
}

export interface ListApiKeysInput {
  limit?: number
  cursor?: string
}

export interface CreateApiKeyOptions {
  /**
   * The largest own `rateLimit` a caller without the admin scope may give a
   * key (the service's default budget), so a key cannot buy its creator more
   * than they have. Undefined: no ceiling.
   */
  maxRateLimitWithoutAdmin?: number
  /** Live keys one account may own (MAX_KEYS_PER_ACCOUNT); undefined: API_KEY_LIMITS.defaultMaxPerAccount. */
  maxKeysPerAccount?: number
}

/** A key's owner and admins may see and revoke it; anyone else may not. */
const findOwnKey = async ({ apiKeys }: Pick<Ports, 'apiKeys'>, actor: Caller, id: string): Promise<ApiKey> => {
  const key = isId(id) ? await apiKeys.findById(id) : undefined
  if (key === undefined) throw apiKeyNotFound(id)
  if (key.ownerId !== actor.accountId && !hasScope(actor, 'admin')) throw forbidden('this API key belongs to another account')
  return key
}

export const createApiKey = ({ apiKeys, unitOfWork, clock, ids }: Pick<Ports, 'apiKeys' | 'unitOfWork' | 'clock' | 'ids'>, options: CreateApiKeyOptions = {}) =>
  async (actor: Caller, input: NewApiKeyInput): Promise<CreatedApiKey> => {
    const name = checkKeyName(input.name)
    const scopes = input.scopes === undefined ? [...actor.scopes] : checkScopes(input.scopes)
    const rateLimit = checkRateLimit(input.rateLimit)
    const wider = scopes.filter((scope) => !hasScope(actor, scope))
    if (wider.length > 0) throw forbidden(`a key cannot have scopes its creator lacks: ${wider.join(', ')}`)
    const ceiling = options.maxRateLimitWithoutAdmin
    if (rateLimit !== null && ceiling !== undefined && rateLimit > ceiling && !hasScope(actor, 'admin')) {
      throw forbidden(`only admins may give a key a rateLimit above the default of ${ceiling}`)
    }
    // Keys are cheap to mint and each is a caller with its own records: the
    // cap bounds what one account can make the service keep. Two creations
    // at once may both pass it, by one each: bounded by the requests in flight.
    const maxKeys = options.maxKeysPerAccount ?? API_KEY_LIMITS.defaultMaxPerAccount
    if (await apiKeys.countActive(actor.accountId) >= maxKeys) throw tooManyKeys(maxKeys)
    const secret = newApiKeySecret()
    const key: ApiKey = {
      id: ids.next(),
      ownerId: actor.accountId,
      name,
      scopes,
      rateLimit,
      lookupId: secret.lookupId,
      secretHash: secret.secretHash,
      createdAt: clock.now(),
      revokedAt: null
    }
    const view = toApiKeyView(key)
    await unitOfWork.run(async (tx) => {
      await tx.apiKeys.insert(key)
      tx.changes.record(changeEvents({ clock, ids }, actor)('apikey.created', subjects.apiKey(key.id), apiKeyData(view)))
    })
    return { ...view, key: secret.key }
  }

/** The caller's active keys, oldest first, a page at a time; an admin sees everyone's. */
export const listApiKeys = ({ apiKeys }: Pick<Ports, 'apiKeys'>) =>
  async (actor: Caller, input: ListApiKeysInput = {}): Promise<Page<ApiKeyView>> => {
    const limit = checkLimit(input.limit ?? LIST_LIMITS.apiKeys.default, LIST_LIMITS.apiKeys.max)
    const after = input.cursor === undefined ? undefined : decodeInstantCursor(input.cursor, 'api-keys')
    const keys = await apiKeys.listActive({
      limit: limit + 1,
      ...(after === undefined ? {} : { after }),
      ...(hasScope(actor, 'admin') ? {} : { ownerId: actor.accountId })
    })
    return toPage(keys.map(toApiKeyView), limit, (key) => instantKey('api-keys', key.createdAt, key.id))
  }

/** Revokes a key everywhere: stored first, then announced to every instance's cache. */
export const revokeApiKey = (ports: Pick<Ports, 'apiKeys' | 'revocations' | 'unitOfWork' | 'clock' | 'ids'>) =>
  async (actor: Caller, id: string): Promise<void> => {
    const key = await findOwnKey(ports, actor, id)
    if (key.revokedAt !== null) throw apiKeyNotFound(id)
    await ports.unitOfWork.run(async (tx) => {
      if (!await tx.apiKeys.revoke(id, ports.clock.now())) throw apiKeyNotFound(id)
      tx.changes.record(changeEvents(ports, actor)('apikey.deleted', subjects.apiKey(id), { id }))
    })
    await ports.revocations.revoked()
  }

/** Stored counts plus those this instance has not written yet. */
export const getApiKeyUsage = (ports: Pick<Ports, 'apiKeys' | 'apiKeyUsage'>, meter: Pick<UsageMeter, 'usage'>) =>
  async (actor: Caller, id: string): Promise<ApiKeyUsageReport> => {
    const key = await findOwnKey(ports, actor, id)
    const days = new Map<string, number>()
    for (const { day, requests } of await meter.usage(key.id, () => ports.apiKeyUsage.byDay(key.id))) {
      days.set(day, (days.get(day) ?? 0) + requests)
    }
    const byDay = [...days].map(([day, requests]) => ({ day, requests })).sort((a, b) => (a.day < b.day ? -1 : 1))
    return { id: key.id, total: byDay.reduce((sum, d) => sum + d.requests, 0), byDay }
  }
