import type { components, operations } from './generated/openapi.js'

/*
 * The public names of the REST types, all taken from the types generated
 * from the service's OpenAPI document (src/generated/openapi.ts).
 */

type JsonBody<O extends keyof operations> = operations[O] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never
type JsonAnswer<O extends keyof operations, S extends number> = operations[O]['responses'] extends { [K in S]: { content: { 'application/json': infer R } } } ? R : never
type QueryOf<O extends keyof operations> = NonNullable<operations[O]['parameters']['query']>
type Item<L> = L extends Array<infer I> ? I : never

export type Person = components['schemas']['Person']
export type PersonSummary = components['schemas']['PersonSummary']
export type Message = components['schemas']['Message']
export type NewPerson = Omit<JsonBody<'createOrUpdatePerson'>, 'id'> & { name: string }
export type PersonPatch = JsonBody<'updatePerson'>
export type NewMessage = JsonBody<'sendMessage'>
export type Friendship = JsonAnswer<'addFriend', 200>
export type EndedFriendship = JsonAnswer<'removeFriend', 200>
export type DeletedPerson = JsonAnswer<'deletePerson', 200>

export type ApiKey = Item<JsonAnswer<'listApiKeys', 200>>
export type NewApiKey = JsonBody<'createApiKey'>
export type CreatedApiKey = JsonAnswer<'createApiKey', 201>
export type KeyUsage = JsonAnswer<'getApiKeyUsage', 200>
export type DeletedApiKey = JsonAnswer<'revokeApiKey', 200>

export type Account = Item<JsonAnswer<'listAccounts', 200>>
export type CurrentAccount = JsonAnswer<'getCurrentAccount', 200>
export type NewAccount = JsonBody<'createAccount'>
export type AccountPatch = JsonBody<'updateAccount'>
export type DeletedAccount = JsonAnswer<'deleteAccount', 200>
export type Credentials = JsonBody<'logIn'>
export type AccessToken = JsonAnswer<'logIn', 200>
export type PasswordChange = JsonBody<'changePassword'>

export type PeopleQuery = Omit<QueryOf<'listPeople'>, 'cursor'>
export type FriendsQuery = Omit<QueryOf<'listFriends'>, 'cursor'>
export type MessagesQuery = Omit<QueryOf<'listMessages'>, 'cursor'>
export type PageQuery = { limit?: number | undefined }

/** What the client read of the response a result came from. */
export interface ResponseInfo {
  statusCode: number
  requestId: string | undefined
  /** The resource's ETag: give it as `ifMatch` to change it only if no one else has. */
  etag: string | undefined
  /** True when the service answered a repeated Idempotency-Key with its stored answer. */
  replayed: boolean
  /** The response's `Location`, on creation. */
  location: string | undefined
}

/** A result, with the response it came from as a non-enumerable `lastResponse` (JSON and equality ignore it). */
export type WithResponse<T> = T & { readonly lastResponse: ResponseInfo }
