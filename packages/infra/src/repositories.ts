import { DEFAULT_EVENT_SOURCE, type Ports } from '@people-service/domain'
import { kyselyAccountRepository } from './account/kysely-account.repository.js'
import { kyselyApiKeyUsageRepository } from './api-key/kysely-api-key-usage.repository.js'
import { kyselyApiKeyRepository } from './api-key/kysely-api-key.repository.js'
import type { DatabaseHandle } from './database.js'
import { kyselyIdempotencyRepository } from './idempotency/kysely-idempotency.repository.js'
import { kyselyFriendshipRepository } from './friendship/kysely-friendship.repository.js'
import { kyselyMessageRepository } from './message/kysely-message.repository.js'
import { kyselyPersonRepository } from './person/kysely-person.repository.js'
import { sqlPersonProjections } from './person/sql-person-projections.js'
import { eventOutbox, kyselyChangeFeed } from './event/event-log.js'
import { kyselyUnitOfWork } from './unit-of-work.js'
import { kyselyWebhookRepository } from './webhook/kysely-webhook.repository.js'

export type Repositories = Pick<Ports, 'people' | 'friendships' | 'projections' | 'messages' | 'accounts' | 'apiKeys' | 'apiKeyUsage' | 'idempotency' | 'unitOfWork' | 'changeFeed' | 'webhooks'>

export interface RepositoryOptions {
  /** The CloudEvents `source` of the events recorded (EVENTS_SOURCE). */
  eventSource?: string
}

/** The domain's storage ports over one database. */
export const createRepositories = ({ db, dialect }: DatabaseHandle, { eventSource = DEFAULT_EVENT_SOURCE }: RepositoryOptions = {}): Repositories => {
  const outbox = eventOutbox(dialect, eventSource)
  return {
    people: kyselyPersonRepository(db, dialect, outbox),
    friendships: kyselyFriendshipRepository(db, dialect),
    projections: sqlPersonProjections(db, dialect),
    messages: kyselyMessageRepository(db, dialect),
    accounts: kyselyAccountRepository(db, dialect, undefined, outbox),
    apiKeys: kyselyApiKeyRepository(db),
    apiKeyUsage: kyselyApiKeyUsageRepository(db, dialect),
    idempotency: kyselyIdempotencyRepository(db),
    unitOfWork: kyselyUnitOfWork(db, dialect, outbox),
    changeFeed: kyselyChangeFeed(db, dialect, outbox),
    webhooks: kyselyWebhookRepository(db)
  }
}
