import type { Generated, Insertable, Kysely, Selectable } from 'kysely'

/**
 * Table shapes as the database sees them. Timestamps are ISO-8601 text in
 * SQLite and `timestamptz` in PostgreSQL, so reads may yield either; the
 * row mappers turn both into `Date`.
 */
type Timestamp = string | Date

export interface PersonTable {
  /** The key inside the database (friendships and messages point at it); never leaves it. */
  pk: Generated<number>
  /** The public id (UUIDv7): the only id the domain sees. */
  id: string
  name: string
  /** `name` folded by the service (foldName: lower case, ς as σ): what `?name=` searches, through a trigram index. */
  name_lower: string
  age: number | null
  email: string | null
  /** 1 when the person has an address object (whose fields may all be null). */
  has_address: number
  street: string | null
  city: string | null
  country: string | null
  created_at: Timestamp
  updated_at: Timestamp
  /** 1 when created, one more on every change: the person's ETag and the condition of every write. */
  version: number
}

/** Stored in both directions; a friend list is ordered by friend_pk, that is by creation. */
export interface FriendshipTable {
  person_pk: number
  friend_pk: number
}

export interface MessageTable {
  id: string
  /** The recipient. */
  person_pk: number
  text: string
  sender_id: string
  sent_at: Timestamp
}

export interface AccountTable {
  id: string
  username: string
  /** The username NFKC-normalized and case folded (usernameKey): unique, what a login finds it by. */
  username_key: string
  role: string
  password_hash: string
  /** 0 or 1 on both databases. */
  disabled: number
  token_version: number
  /** 0 or 1: set while an account is deleted in steps. */
  deleting: number
  created_at: Timestamp
}

export interface ApiKeyTable {
  id: string
  owner_id: string
  name: string
  /** Space-separated, in canonical order: one portable column on both databases. */
  scopes: string
  rate_limit: number | null
  lookup_id: string
  secret_hash: string
  created_at: Timestamp
  revoked_at: Timestamp | null
}

export interface ApiKeyUsageTable {
  key_id: string
  /** YYYY-MM-DD (UTC) as text on both databases: compared and grouped as a string. */
  day: string
  requests: number
}

/** Small values the service makes up once and shares between instances (the dev JWT secret). */
export interface ServiceSettingTable {
  name: string
  value: string
  created_at: Timestamp
}

/** One caller's Idempotency-Key: held while its first request runs, then that request's answer. */
export interface IdempotencyKeyTable {
  /** The caller (account or API key id). */
  scope: string
  key: string
  fingerprint: string
  token: string
  /** The account whose allowance the record takes (IDEMPOTENCY_KEYS_PER_DAY). */
  owner: string
  /** The person whose data the answer holds: deleting them erases it. Null until answered. */
  subject: string | null
  /** The answer a repeat gets: null while the first request runs, and once erased. */
  status: number | null
  /** The answer's headers, a JSON object. */
  headers: string | null
  /** The answer's body, deflated (idempotency/stored-body.ts). */
  body: Uint8Array | null
  /** 1 once the answer went with its subject. */
  erased: Generated<number>
  locked_until: Timestamp
  expires_at: Timestamp
}

export interface WebhookTable {
  id: string
  url: string
  /** Space-separated event types; empty: every type. */
  types: string
  description: string | null
  disabled: number
  sealed_secret: string
  created_at: Timestamp
}

export interface WebhookDeliveryTable {
  id: string
  webhook_id: string
  event_id: string
  /** The event as sent and signed. */
  body: string
  status: 'pending' | 'delivered' | 'failed'
  attempts: number
  last_status_code: number | null
  /** Due time of a pending delivery (the end of its lease while claimed); null once final. */
  next_attempt_at: Timestamp | null
  /** The token of the instance attempting it, while it does. */
  claim: string | null
  give_up_at: Timestamp
  created_at: Timestamp
}

export interface WebhookRelayTable {
  id: number
  position: number | string
}

/** One recorded change (migration 0015-event-log). */
export interface EventTable {
  /** Commit order; bigint on PostgreSQL, whose driver gives it as text. */
  position: number | string
  id: string
  type: string
  source: string
  subject: string
  time: Timestamp
  actor_kind: string
  actor_id: string
  /** The event's data as JSON text. */
  data: string
}

/** One row: the last position given and the last one pruned. */
export interface EventSequenceTable {
  id: number
  last: number | string
  pruned_through: number | string
}

export interface Database {
  person: PersonTable
  friendship: FriendshipTable
  message: MessageTable
  account: AccountTable
  api_key: ApiKeyTable
  api_key_usage: ApiKeyUsageTable
  service_setting: ServiceSettingTable
  idempotency_key: IdempotencyKeyTable
  webhook: WebhookTable
  webhook_delivery: WebhookDeliveryTable
  webhook_relay: WebhookRelayTable
  event: EventTable
  event_sequence: EventSequenceTable
}

export type PersonRow = Selectable<PersonTable>
export type NewPersonRow = Insertable<PersonTable>
export type MessageRow = Selectable<MessageTable>
export type AccountRow = Selectable<AccountTable>
export type ApiKeyRow = Selectable<ApiKeyTable>
export type IdempotencyKeyRow = Selectable<IdempotencyKeyTable>
export type WebhookRow = Selectable<WebhookTable>
export type WebhookDeliveryRow = Selectable<WebhookDeliveryTable>

export type Dialect = 'sqlite' | 'postgres'

export interface DatabaseHandle {
  db: Kysely<Database>
  dialect: Dialect
  close(): Promise<void>
  /** Connections of the pool (PostgreSQL); SQLite has one connection and no pool. */
  poolStats?(): { total: number, idle: number, waiting: number }
}
