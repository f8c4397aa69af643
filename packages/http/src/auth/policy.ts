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
  // The address the server prints, and the icon a browser asks for beside it.
  root: PUBLIC,
  favicon: PUBLIC,
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
  // Where the service sends its events, and the log of what it sent.
  'webhooks.create': needs('admin'),
  'webhooks.list': needs('admin'),
  'webhooks.get': needs('admin'),
  'webhooks.update': needs('admin'),
  'webhooks.delete': needs('admin'),
  'webhooks.deliveries': needs('admin'),
  'webhooks.retry': needs('admin'),

  // The event log is the audit trail of every change: admins (accounts or keys with the admin scope).
  'events.list': needs('admin'),

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

/**
 * Who may see the fields a response carries, by the type that carries them,
 * whatever the door (REST bodies, GraphQL results, mutation payloads
 * included): every field of a guarded type needs `scope`, but those in
 * `open`. Reaching the value at all is the operation's row above; this
 * table decides what of it leaves. A field added to a guarded type is
 * guarded until it is named here as open. A writer without `people:read`
 * learns the id of the person it wrote, and no more.
 */
export const VISIBILITY = {
  Person: { scope: 'people:read', open: ['id'] },
  Address: { scope: 'people:read', open: [] }
} as const satisfies Record<string, { scope: Scope, open: readonly string[] }>

export type GuardedType = keyof typeof VISIBILITY

const isGuardedType = (type: string): type is GuardedType => Object.hasOwn(VISIBILITY, type)

/** The scope a caller needs to see `field` of `type`; undefined when the field is open to whoever reaches it. */
export const scopeToSee = (type: string, field: string): Scope | undefined => {
  if (!isGuardedType(type)) return undefined
  const { scope, open } = VISIBILITY[type]
  return (open as readonly string[]).includes(field) ? undefined : scope
}

/** May this caller see `field` of `type`? */
export const maySee = (caller: Caller, type: string, field: string): boolean => {
  const scope = scopeToSee(type, field)
  return scope === undefined || hasScope(caller, scope)
}

/**
 * A value of a guarded type as this caller may see it: whole, or only its
 * open fields. REST serializers pass every person they answer through it.
 */
export const visiblePart = <T extends object, K extends GuardedType>(caller: Caller, type: K, value: T): T | OpenPart<T, K> => {
  if (hasScope(caller, VISIBILITY[type].scope)) return value
  const open: readonly string[] = VISIBILITY[type].open
  return Object.fromEntries(Object.entries(value).filter(([field]) => open.includes(field))) as OpenPart<T, K>
}

/** The fields of a value of a guarded type that anyone who reaches it may see. */
export type OpenPart<T, K extends GuardedType> = Pick<T, Extract<keyof T, (typeof VISIBILITY)[K]['open'][number]>>

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
