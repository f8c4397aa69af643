import { callerAuthenticator, type CallerAuthenticatorOptions } from '../caller/caller-authenticator.js'
import { createUsageMeter } from '../api-key/usage-meter.js'
import type { Actor } from '../change/change-event.js'
import type { IdempotentRequest, StoredResponse } from '../idempotency/idempotency.repository.js'
import type { Message } from '../message/message.js'
import type { Person, PersonInput } from '../person/person.js'
import type { Ports } from '../ports.js'
import { createApiKey, getApiKeyUsage, listApiKeys, revokeApiKey, type CreateApiKeyOptions } from './api-keys.js'
import { changePassword } from './change-password.js'
import { createAccount, insertAccount } from './create-account.js'
import { deleteAccount } from './delete-account.js'
import { describeCaller } from './describe-caller.js'
import { listAccounts } from './list-accounts.js'
import { updateAccount } from './update-account.js'
import { ensureAdmin } from './ensure-admin.js'
import { logIn } from './log-in.js'
import { befriend } from './befriend.js'
import { createPerson, storePerson } from './create-person.js'
import { deletePerson } from './delete-person.js'
import { getMessage } from './get-message.js'
import { getPeopleByIds } from './get-people-by-ids.js'
import { getPerson } from './get-person.js'
import { listFriends } from './list-friends.js'
import { listFriendsOfMany, pageFriendsOfMany } from './list-friends-of-many.js'
import { listInbox } from './list-inbox.js'
import { listInboxOfMany, pageInboxOfMany } from './list-inbox-of-many.js'
import { listPeople, listPeopleJson } from './list-people.js'
import { projectPeople, projectPerson } from './project-people.js'
import { idempotently, type IdempotencyOptions } from './idempotently.js'
import { sendMessage, storeMessage, type SendMessageInput } from './send-message.js'
import { unfriend } from './unfriend.js'
import { updatePerson } from './update-person.js'

export {
  befriend, createPerson, deletePerson, getMessage, getPeopleByIds, getPerson, listFriends, listFriendsOfMany,
  listInbox, listInboxOfMany, listPeople, pageFriendsOfMany, pageInboxOfMany, projectPeople, projectPerson, sendMessage, unfriend, updatePerson
}
export type { ProjectPeopleInput } from './project-people.js'
export type { DeletePersonOptions } from './delete-person.js'
export type { DeleteAccountOptions } from './delete-account.js'
export { cursorAfterPerson, type ListPeopleInput } from './list-people.js'
export type { ListFriendsInput } from './list-friends.js'
export type { ListInboxInput } from './list-inbox.js'
export type { SendMessageInput } from './send-message.js'
export { LIST_LIMITS } from './limits.js'
export { webhookUseCases, type CreatedWebhook, type WebhookPorts, type WebhookUseCases } from './webhooks.js'
export { createAccount, insertAccount, ensureAdmin, logIn, createApiKey, getApiKeyUsage, listApiKeys, revokeApiKey }
export { changePassword, deleteAccount, describeCaller, listAccounts, updateAccount }
export type { ChangePasswordInput } from './change-password.js'
export type { CallerDescription } from './describe-caller.js'
export type { ListAccountsInput } from './list-accounts.js'
export type { ApiKeyUsageReport, CreateApiKeyOptions, CreatedApiKey, ListApiKeysInput } from './api-keys.js'
export { generatedPassword, type EnsureAdminResult } from './ensure-admin.js'

/**
 * The ports of people, friendships and messages: all createUseCases needs.
 * Each use case alone takes fewer (see its factory's parameter).
 */
export type UseCasePorts = Pick<Ports, 'people' | 'friendships' | 'projections' | 'messages' | 'clock' | 'ids' | 'events' | 'idempotency' | 'unitOfWork'>

/** The ports of accounts, logins and API keys: all createAccessUseCases needs. */
export type AccessPorts = Pick<Ports, 'accounts' | 'apiKeys' | 'apiKeyUsage' | 'passwords' | 'revocations' | 'unitOfWork' | 'clock' | 'ids'>

/** Every use case bound to one set of ports: what an adapter serves. */
export const createUseCases = (ports: UseCasePorts, options: IdempotencyOptions = {}) => {
  const once = idempotently(ports, options)
  const publish = ports.events
  const store = storePerson(ports)
  const storeSent = storeMessage(ports)
  return {
    ...plainUseCases(ports),
    /** createPerson once per Idempotency-Key; `record` makes what a repeat is answered with, kept until the person is deleted. */
    createPersonOnce: (actor: Actor, request: IdempotentRequest, input: PersonInput, record: (person: Person) => StoredResponse) =>
      once(request, (tx) => store(tx, actor, input), (person) => ({ subject: person.id, response: record(person) })),
    /** sendMessage once per Idempotency-Key: announced once, after the message and its record commit; kept until its recipient is deleted. */
    sendMessageOnce: async (actor: Actor, request: IdempotentRequest, input: SendMessageInput, record: (message: Message) => StoredResponse) => {
      const outcome = await once(request, (tx) => storeSent(tx, actor, input),
        (message) => ({ subject: message.personId, response: record(message) }))
      if (!outcome.replayed) await publish.published(outcome.result)
      return outcome
    }
  }
}

const plainUseCases = (ports: UseCasePorts) => ({
  listPeople: listPeople(ports),
  listPeopleJson: listPeopleJson(ports),
  getPerson: getPerson(ports),
  getPeopleByIds: getPeopleByIds(ports),
  createPerson: createPerson(ports),
  updatePerson: updatePerson(ports),
  deletePerson: deletePerson(ports),
  befriend: befriend(ports),
  unfriend: unfriend(ports),
  listFriends: listFriends(ports),
  listFriendsOfMany: listFriendsOfMany(ports),
  pageFriendsOfMany: pageFriendsOfMany(ports),
  sendMessage: sendMessage(ports),
  getMessage: getMessage(ports),
  listInbox: listInbox(ports),
  listInboxOfMany: listInboxOfMany(ports),
  pageInboxOfMany: pageInboxOfMany(ports),
  projectPerson: projectPerson(ports),
  projectPeople: projectPeople(ports)
})

export type UseCases = ReturnType<typeof createUseCases>

export interface AccessOptions extends CreateApiKeyOptions {
  credentialCache?: CallerAuthenticatorOptions
}

/**
 * Accounts, logins, API keys and credential checks bound to one set of ports. Holds state (the
 * key cache and the usage counts not yet written), so an adapter makes it
 * once and flushes `usageMeter` when it stops.
 */
export const createAccessUseCases = (ports: AccessPorts, { credentialCache, ...options }: AccessOptions = {}) => {
  const usageMeter = createUsageMeter(ports)
  const authenticator = callerAuthenticator(ports, credentialCache)
  return {
    createAccount: createAccount(ports),
    listAccounts: listAccounts(ports),
    updateAccount: updateAccount(ports),
    deleteAccount: deleteAccount(ports),
    changePassword: changePassword(ports),
    describeCaller: describeCaller(ports),
    ensureAdmin: ensureAdmin(ports),
    logIn: logIn(ports),
    createApiKey: createApiKey(ports, options),
    listApiKeys: listApiKeys(ports),
    revokeApiKey: revokeApiKey(ports),
    getApiKeyUsage: getApiKeyUsage(ports, usageMeter),
    authenticateApiKey: authenticator.apiKey,
    authenticateToken: authenticator.accessToken,
    usageMeter
  }
}

export type AccessUseCases = ReturnType<typeof createAccessUseCases>
