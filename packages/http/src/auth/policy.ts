import { type Caller, forbidden, hasScope, type Scope, unauthenticated } from '@people-service/domain'

/** What an operation asks of its caller. */
export type Requirement =
  | { access: 'public' }
  /**
   * Any verified caller with `scope` (when given); `accounts` only: API keys
   * may not; `metricsToken`: the METRICS_TOKEN bearer may too.
   */
  | { access: 'caller', scope?: Scope, accounts?: true, metricsToken?: true }

const PUBLIC = { access: 'public' } as const satisfies Requirement
const ANY_CALLER = { access: 'caller' } as const satisfies Requirement
const needs = <S extends Scope>(scope: S) => ({ access: 'caller', scope }) as const satisfies Requirement
// Key and account management is for people who logged in: a leaked key must
// not be able to mint keys or accounts that outlive its own revocation.
const ACCOUNTS = { access: 'caller', accounts: true } as const satisfies Requirement
const ADMIN_ACCOUNTS = { access: 'caller', scope: 'admin', accounts: true } as const satisfies Requirement

/**
 * THE policy: every operation the service offers and what it needs. REST
 * routes name their operation in `config.operation` and one hook applies
 * this table; the GraphQL adapter maps each field to an operation
 * (GRAPHQL_FIELD_OPERATIONS) and calls `authorize` with the same table.
 */
export const POLICY = {
  'auth.login': PUBLIC,
  'health.live': PUBLIC,
  'health.ready': PUBLIC,
  openapi: PUBLIC,
  docs: PUBLIC,
  graphiql: PUBLIC,
  // Figures about the deployment (routes, load, pool): admins, or a scraper
  // holding METRICS_TOKEN.
  metrics: { access: 'caller', scope: 'admin', metricsToken: true },

  'people.list': needs('people:read'),
  'person.get': needs('people:read'),
  'person.create': needs('people:write'),
  'person.update': needs('people:write'),
  'person.delete': needs('people:write'),
  'friends.list': needs('people:read'),
  'friends.add': needs('people:write'),
  'friends.remove': needs('people:write'),
  'messages.list': needs('people:read'),
  'message.get': needs('people:read'),
  'message.send': needs('messages:send'),

  'users.create': ADMIN_ACCOUNTS,
  'users.list': ADMIN_ACCOUNTS,
  'users.update': ADMIN_ACCOUNTS,
  'users.delete': ADMIN_ACCOUNTS,
  // Any credential may ask who it is and what it may do.
  'users.me': ANY_CALLER,
  'auth.password': ACCOUNTS,
  // Whose keys a caller may see or revoke is decided per key by the use cases
  // (their own; admins: everyone's), since it depends on the key, not the route.
  'apiKeys.create': ACCOUNTS,
  'apiKeys.list': ACCOUNTS,
  'apiKeys.revoke': ACCOUNTS,
  'apiKeys.usage': ACCOUNTS,

  // The GraphQL endpoint as a whole: authenticated (and counted against the
  // caller's budget) by the hook; each field is then checked by its own row.
  graphql: ANY_CALLER
} as const satisfies Record<string, Requirement>

export type Operation = keyof typeof POLICY

export const isOperation = (name: unknown): name is Operation => typeof name === 'string' && Object.hasOwn(POLICY, name)

/**
 * Routes registered by plugins that cannot carry `config.operation`
 * (GraphQL, API docs, metrics), by URL; `/*` matches everything below.
 */
export const ROUTE_OPERATIONS: Readonly<Record<string, Operation>> = {
  '/graphql': 'graphql',
  '/graphiql': 'graphiql',
  '/graphiql/*': 'graphiql',
  '/openapi.json': 'openapi',
  '/docs': 'docs',
  '/docs/*': 'docs',
  '/metrics': 'metrics'
}

export const operationOfUrl = (url: string): Operation | undefined => {
  const exact = ROUTE_OPERATIONS[url]
  if (exact !== undefined) return exact
  const prefix = Object.keys(ROUTE_OPERATIONS).find((pattern) => pattern.endsWith('/*') && url.startsWith(pattern.slice(0, -1)))
  return prefix === undefined ? undefined : ROUTE_OPERATIONS[prefix]
}

/**
 * The GraphQL schema's fields, each as the REST operation it mirrors, so one
 * row governs both APIs. Nested fields are checked as well as root fields:
 * `{ person { messages } }` needs what GET /person/<id>/messages needs.
 */
export const GRAPHQL_FIELD_OPERATIONS = {
  'Query.person': 'person.get',
  'Query.people': 'people.list',
  'Query.peopleConnection': 'people.list',
  'Query.message': 'message.get',
  'Person.friends': 'friends.list',
  'Person.friendsConnection': 'friends.list',
  'Person.messages': 'messages.list',
  'Person.messagesConnection': 'messages.list',
  'Message.person': 'person.get',
  'Mutation.createPerson': 'person.create',
  'Mutation.updatePerson': 'person.update',
  'Mutation.deletePerson': 'person.delete',
  'Mutation.addFriend': 'friends.add',
  'Mutation.removeFriend': 'friends.remove',
  'Mutation.sendMessage': 'message.send',
  'Subscription.messageSent': 'messages.list'
} as const satisfies Record<string, Operation>

/** Checks a requirement; throws UNAUTHENTICATED (401) or FORBIDDEN (403). */
export const check = (caller: Caller | undefined, requirement: Requirement, what: string): Caller | undefined => {
  if (requirement.access === 'public') return caller
  if (caller === undefined) throw unauthenticated()
  if (requirement.accounts === true && caller.kind !== 'account') {
    throw forbidden(`${what} needs a logged-in account; API keys cannot manage keys or accounts`)
  }
  if (requirement.scope !== undefined && !hasScope(caller, requirement.scope)) {
    throw forbidden(`${what} needs the ${requirement.scope} scope`)
  }
  return caller
}

/** The operations that need a caller: every row but the public ones. */
export type ProtectedOperation = { [K in Operation]: typeof POLICY[K] extends { access: 'caller' } ? K : never }[Operation]

/**
 * May this caller perform this operation? Returns the caller; throws
 * DomainError UNAUTHENTICATED or FORBIDDEN, which both adapters map through
 * STATUS_OF (401 / 403 in REST, `extensions.code` in GraphQL).
 */
export const authorize = (caller: Caller | undefined, operation: ProtectedOperation): Caller =>
  check(caller, POLICY[operation], operation) as Caller
