import { apiKeyAuthenticator, type ApiKeyAuthenticatorOptions } from '../api-key/api-key-authenticator.js'
import { createUsageMeter } from '../api-key/usage-meter.js'
import type { Ports } from '../ports.js'
import { createApiKey, getApiKeyUsage, listApiKeys, revokeApiKey, type CreateApiKeyOptions } from './api-keys.js'
import { createAccount } from './create-account.js'
import { ensureAdmin } from './ensure-admin.js'
import { logIn } from './log-in.js'
import { befriend } from './befriend.js'
import { createPerson } from './create-person.js'
import { deletePerson } from './delete-person.js'
import { getMessage } from './get-message.js'
import { getPeopleByIds } from './get-people-by-ids.js'
import { getPerson } from './get-person.js'
import { listFriends } from './list-friends.js'
import { listFriendsOfMany } from './list-friends-of-many.js'
import { listInbox } from './list-inbox.js'
import { listInboxOfMany } from './list-inbox-of-many.js'
import { listPeople } from './list-people.js'
import { sendMessage } from './send-message.js'
import { unfriend } from './unfriend.js'
import { updatePerson } from './update-person.js'

export {
  befriend, createPerson, deletePerson, getMessage, getPeopleByIds, getPerson, listFriends, listFriendsOfMany,
  listInbox, listInboxOfMany, listPeople, sendMessage, unfriend, updatePerson
}
export { cursorAfterPerson, type ListPeopleInput } from './list-people.js'
export type { ListInboxInput } from './list-inbox.js'
export type { SendMessageInput } from './send-message.js'
export { LIST_LIMITS } from './limits.js'
export { createAccount, ensureAdmin, logIn, createApiKey, getApiKeyUsage, listApiKeys, revokeApiKey }
export { API_KEY_LIST_LIMIT, type ApiKeyUsageReport, type CreateApiKeyOptions, type CreatedApiKey } from './api-keys.js'
export type { EnsureAdminResult } from './ensure-admin.js'

/** Every use case bound to one set of ports: what an adapter serves. */
export const createUseCases = (ports: Ports) => ({
  listPeople: listPeople(ports),
  getPerson: getPerson(ports),
  getPeopleByIds: getPeopleByIds(ports),
  createPerson: createPerson(ports),
  updatePerson: updatePerson(ports),
  deletePerson: deletePerson(ports),
  befriend: befriend(ports),
  unfriend: unfriend(ports),
  listFriends: listFriends(ports),
  listFriendsOfMany: listFriendsOfMany(ports),
  sendMessage: sendMessage(ports),
  getMessage: getMessage(ports),
  listInbox: listInbox(ports),
  listInboxOfMany: listInboxOfMany(ports)
})

export type UseCases = ReturnType<typeof createUseCases>

export interface AccessOptions extends CreateApiKeyOptions {
  apiKeyCache?: ApiKeyAuthenticatorOptions
}

/**
 * Accounts, logins and API keys bound to one set of ports. Holds state (the
 * key cache and the usage counts not yet written), so an adapter makes it
 * once and flushes `usageMeter` when it stops.
 */
export const createAccessUseCases = (ports: Ports, { apiKeyCache, ...options }: AccessOptions = {}) => {
  const usageMeter = createUsageMeter(ports)
  return {
    createAccount: createAccount(ports),
    ensureAdmin: ensureAdmin(ports),
    logIn: logIn(ports),
    createApiKey: createApiKey(ports, options),
    listApiKeys: listApiKeys(ports),
    revokeApiKey: revokeApiKey(ports),
    getApiKeyUsage: getApiKeyUsage(ports, usageMeter),
    authenticateApiKey: apiKeyAuthenticator(ports, apiKeyCache),
    usageMeter
  }
}

export type AccessUseCases = ReturnType<typeof createAccessUseCases>
