import type { CloudEvent, CreatedWebhook, EventQuery, NewWebhook, Webhook, WebhookDelivery, WebhookPatch } from './events.types.js'
import { cursorOf, nextLink, paginate, withQuery, type Page, type Paginated } from './paging.js'
import type { AbortSignalLike, Fetch } from './platform.js'
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy.js'
import { createTransport, type Answer, type Call, type Transport } from './transport.js'
import type {
  AccessToken, Account, AccountPatch, ApiKey, CreatedApiKey, Credentials, CurrentAccount, DeletedAccount, DeletedApiKey,
  DeletedPerson, EndedFriendship, FriendsQuery, Friendship, KeyUsage, Message, MessagesQuery, NewAccount, NewApiKey,
  NewMessage, NewPerson, PageQuery, PasswordChange, PeopleQuery, Person, PersonPatch, PersonSummary, ResponseInfo, WithResponse
} from './types.js'

export interface ClientOptions {
  /** The service's origin, e.g. `https://people.example.org` (a path in it is refused: the service's paths start at its root). */
  baseUrl: string
  /** Sent as `X-API-Key`. */
  apiKey?: string | undefined
  /** Sent as `Authorization: Bearer …`; a function is asked before every attempt (tokens that renew). */
  accessToken?: string | (() => string | Promise<string>) | undefined
  /** Attempts per call, the first included (default 3); 1 turns retries off. */
  maxAttempts?: number | undefined
  /** A Retry-After longer than this fails the call at once instead of waiting (default 30,000 ms). */
  maxRetryDelayMs?: number | undefined
  /** The first back-off where the service names no delay (default 250 ms, doubling). */
  baseRetryDelayMs?: number | undefined
  /** How long one attempt may take (default 30,000 ms). */
  timeoutMs?: number | undefined
  /** Headers sent with every request. */
  headers?: Record<string, string> | undefined
  /** The platform's `fetch` by default. */
  fetch?: Fetch | undefined
}

export interface WriteOptions {
  /** Change only if the resource is still at this ETag; else PreconditionFailedError (412) and nothing changes. */
  ifMatch?: string | undefined
}

export interface CreateOptions {
  /** The key that makes a repeat safe; the client makes one per call when none is given and keeps it across its retries. */
  idempotencyKey?: string | undefined
}

export interface TailOptions extends EventQuery {
  /** The cursor to start after (a `cursor` of an earlier tail or page); the oldest kept event when absent. */
  after?: string | undefined
  /** Seconds each poll waits for news, 0–30 (default 30). */
  wait?: number | undefined
  /** Ends the tail, also during a poll. */
  signal?: AbortSignalLike | undefined
}

/** Events as they come, forever (or until `break`, or the signal). */
export interface EventTail extends AsyncIterable<CloudEvent> {
  /**
   * Where to resume (as `after`) once the events handed out so far are done with:
   * after the last one when it ended a page, else before its page (whose
   * earlier events then come again: at least once, never skipped).
   */
  readonly cursor: string | undefined
  /** The events a poll at a time, each with the cursor after it. */
  pages(): AsyncIterableIterator<Page<CloudEvent>>
}

const info = (answer: Answer): ResponseInfo => ({
  statusCode: answer.status,
  requestId: answer.headers.get('x-request-id') ?? undefined,
  etag: answer.headers.get('etag') ?? undefined,
  replayed: answer.headers.get('idempotent-replayed') === 'true',
  location: answer.headers.get('location') ?? undefined
})

const withResponse = <T>(answer: Answer): WithResponse<T> =>
  Object.defineProperty(answer.body as object, 'lastResponse', { value: info(answer), enumerable: false }) as WithResponse<T>

const id = (value: string): string => encodeURIComponent(value)

/**
 * A People Service client. Every method calls the REST API through one
 * transport that retries what is safe (see ClientOptions); every failure is a
 * PeopleServiceError.
 */
export class PeopleServiceClient {
  readonly #send: Transport
  readonly #newKey: () => string

  constructor (options: ClientOptions) {
    const retry: RetryPolicy = {
      maxAttempts: options.maxAttempts ?? DEFAULT_RETRY_POLICY.maxAttempts,
      maxRetryDelayMs: options.maxRetryDelayMs ?? DEFAULT_RETRY_POLICY.maxRetryDelayMs,
      baseDelayMs: options.baseRetryDelayMs ?? DEFAULT_RETRY_POLICY.baseDelayMs
    }
    const { apiKey, accessToken } = options
    this.#send = createTransport({
      baseUrl: options.baseUrl,
      fetch: options.fetch ?? ((url, init) => fetch(url, init as RequestInit)),
      retry,
      timeoutMs: options.timeoutMs ?? 30_000,
      headers: options.headers ?? {},
      credentials: async () => ({
        ...(apiKey === undefined ? {} : { 'x-api-key': apiKey }),
        ...(accessToken === undefined ? {} : { authorization: `Bearer ${typeof accessToken === 'function' ? await accessToken() : accessToken}` })
      })
    })
    this.#newKey = () => crypto.randomUUID()
  }

  async #call<T>(call: Call): Promise<WithResponse<T>> {
    return withResponse<T>(await this.#send(call))
  }

  readonly people = {
    /** `for await (const person of client.people.list({ name }))`: every page, following `Link`. */
    list: (query: PeopleQuery = {}): Paginated<PersonSummary> => paginate(this.#send, withQuery('/people', query)),
    get: (personId: string) => this.#call<Person>({ method: 'GET', path: `/person/${id(personId)}` }),
    /** Creates a person once, however often the request is retried (Idempotency-Key). */
    create: (person: NewPerson, options: CreateOptions = {}) =>
      this.#call<Person>({ method: 'POST', path: '/person', body: person, idempotencyKey: options.idempotencyKey ?? this.#newKey() }),
    /** Changes the fields given (null clears one); with `ifMatch`, only if no one changed the person since. */
    update: (personId: string, patch: PersonPatch, options: WriteOptions = {}) =>
      this.#call<Person>({ method: 'PATCH', path: `/person/${id(personId)}`, body: patch, headers: { 'if-match': options.ifMatch } }),
    delete: (personId: string, options: WriteOptions = {}) =>
      this.#call<DeletedPerson>({ method: 'DELETE', path: `/person/${id(personId)}`, headers: { 'if-match': options.ifMatch } }),
    /** A person's friends, every page. */
    friends: (personId: string, query: FriendsQuery = {}): Paginated<PersonSummary> =>
      paginate(this.#send, withQuery(`/person/${id(personId)}/friends`, query)),
    /** Makes two people friends (idempotent). */
    befriend: (personId: string, friendId: string) =>
      this.#call<Friendship>({ method: 'PUT', path: `/person/${id(personId)}/friends/${id(friendId)}` }),
    unfriend: (personId: string, friendId: string) =>
      this.#call<EndedFriendship>({ method: 'DELETE', path: `/person/${id(personId)}/friends/${id(friendId)}` }),
    /** The messages sent to a person, newest first, every page. */
    inbox: (personId: string, query: MessagesQuery = {}): Paginated<Message> =>
      paginate(this.#send, withQuery(`/person/${id(personId)}/messages`, query))
  }

  readonly messages = {
    /** Sends a message once, however often the request is retried (Idempotency-Key). */
    send: (message: NewMessage, options: CreateOptions = {}) =>
      this.#call<Message>({ method: 'POST', path: '/message', body: message, idempotencyKey: options.idempotencyKey ?? this.#newKey() }),
    get: (messageId: string) => this.#call<Message>({ method: 'GET', path: `/message/${id(messageId)}` })
  }

  readonly apiKeys = {
    /** The caller's keys (an admin's: all), every page, without their secrets. */
    list: (query: PageQuery = {}): Paginated<ApiKey> => paginate(this.#send, withQuery('/api-keys', query)),
    /** The answer holds `key`, the secret, shown this once. */
    create: (key: NewApiKey) => this.#call<CreatedApiKey>({ method: 'POST', path: '/api-keys', body: key }),
    delete: (keyId: string) => this.#call<DeletedApiKey>({ method: 'DELETE', path: `/api-keys/${id(keyId)}` }),
    usage: (keyId: string) => this.#call<KeyUsage>({ method: 'GET', path: `/api-keys/${id(keyId)}/usage` })
  }

  readonly users = {
    list: (query: PageQuery = {}): Paginated<Account> => paginate(this.#send, withQuery('/users', query)),
    /** The calling account, with what this credential may do now. */
    me: () => this.#call<CurrentAccount>({ method: 'GET', path: '/users/me' }),
    create: (account: NewAccount) => this.#call<Account>({ method: 'POST', path: '/users', body: account }),
    update: (accountId: string, patch: AccountPatch) => this.#call<Account>({ method: 'PATCH', path: `/users/${id(accountId)}`, body: patch }),
    delete: (accountId: string) => this.#call<DeletedAccount>({ method: 'DELETE', path: `/users/${id(accountId)}` })
  }

  readonly auth = {
    /** A login token, for `accessToken`. */
    login: (credentials: Credentials) => this.#call<AccessToken>({ method: 'POST', path: '/auth/login', body: credentials }),
    changePassword: (change: PasswordChange) => this.#call<{ changed: true }>({ method: 'POST', path: '/auth/password', body: change })
  }

  readonly events = {
    /** Events oldest first, every page there is now. */
    list: (query: EventQuery & { after?: string | undefined } = {}): Paginated<CloudEvent> => paginate(this.#send, eventsPath(query)),
    /** Events as they are recorded, over long polls of `GET /events?wait=`. */
    tail: (options: TailOptions = {}): EventTail => tailEvents(this.#send, options)
  }

  readonly webhooks = {
    /** The answer holds `secret`, shown this once: give it to verifyWebhook. */
    create: (webhook: NewWebhook) => this.#call<CreatedWebhook>({ method: 'POST', path: '/webhooks', body: webhook }),
    list: (query: PageQuery = {}): Paginated<Webhook> => paginate(this.#send, withQuery('/webhooks', query)),
    get: (webhookId: string) => this.#call<Webhook>({ method: 'GET', path: `/webhooks/${id(webhookId)}` }),
    update: (webhookId: string, patch: WebhookPatch) => this.#call<Webhook>({ method: 'PATCH', path: `/webhooks/${id(webhookId)}`, body: patch }),
    delete: (webhookId: string) => this.#call<{ id: string, deleted: true }>({ method: 'DELETE', path: `/webhooks/${id(webhookId)}` }),
    /** Deliveries to a webhook, newest first, every page. */
    deliveries: (webhookId: string, query: PageQuery = {}): Paginated<WebhookDelivery> =>
      paginate(this.#send, withQuery(`/webhooks/${id(webhookId)}/deliveries`, query)),
    retryDelivery: (webhookId: string, deliveryId: string) =>
      this.#call<{ id: string, status: 'pending' }>({ method: 'POST', path: `/webhooks/${id(webhookId)}/deliveries/${id(deliveryId)}/retry` })
  }
}

const eventsPath = (query: EventQuery & { after?: string | undefined, wait?: number | undefined }): string => withQuery('/events', {
  limit: query.limit,
  type: query.types?.join(','),
  subject: query.subject,
  cursor: query.after,
  wait: query.wait
})

/** Polls `GET /events?wait=` from one cursor to the next; an empty answer keeps the place. */
const tailEvents = (send: Transport, options: TailOptions): EventTail => {
  const wait = options.wait ?? 30
  let cursor = options.after
  async function * polls (): AsyncIterableIterator<Page<CloudEvent>> {
    let path = eventsPath({ ...options, wait })
    for (;;) {
      const answer = await send({ method: 'GET', path, extraTimeoutMs: wait * 1000, signal: options.signal })
      const events = Array.isArray(answer.body) ? answer.body as CloudEvent[] : []
      // The contract links every page, the last too; without a link the same place is asked again.
      path = nextLink(answer.headers.get('link'), answer.url) ?? answer.url
      const nextCursor = cursorOf(path) ?? cursor
      if (events.length > 0) yield { items: events, nextCursor }
      else cursor = nextCursor
    }
  }
  return {
    get cursor () { return cursor },
    async * pages () {
      for await (const page of polls()) {
        cursor = page.nextCursor
        yield page
      }
    },
    async * [Symbol.asyncIterator] () {
      for await (const page of polls()) {
        for (const [index, event] of page.items.entries()) {
          // A cursor points between pages: it passes a page with the page's last event.
          if (index === page.items.length - 1) cursor = page.nextCursor
          yield event
        }
      }
    }
  }
}
