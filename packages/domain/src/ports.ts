import type { AccountRepository } from './account/account.repository.js'
import type { PasswordHasher } from './account/password-hasher.js'
import type { ApiKeyRepository } from './api-key/api-key.repository.js'
import type { ApiKeyUsageRepository } from './api-key/api-key-usage.js'
import type { KeyRevocations } from './api-key/key-revocations.js'
import type { ChangeFeed } from './change/change-event.js'
import type { IdempotencyRepository } from './idempotency/idempotency.repository.js'
import type { FriendshipRepository } from './friendship/friendship.repository.js'
import type { MessageEvents } from './message/message.events.js'
import type { MessageRepository } from './message/message.repository.js'
import type { PersonProjections } from './person/person-projection.js'
import type { PersonRepository } from './person/person.repository.js'
import type { Clock } from './shared/clock.js'
import type { IdGenerator } from './shared/ids.js'
import type { UnitOfWork } from './shared/unit-of-work.js'
import type { WebhookDestinations } from './webhook/webhook-destinations.js'
import type { WebhookRepository } from './webhook/webhook.repository.js'
import type { WebhookSecretBox } from './webhook/webhook-secrets.js'

/** Everything the use cases need from the outside world. */
export interface Ports {
  people: PersonRepository
  friendships: FriendshipRepository
  /** People as JSON shaped by a selection (a GraphQL query's, say), built by the store. */
  projections: PersonProjections
  messages: MessageRepository
  accounts: AccountRepository
  apiKeys: ApiKeyRepository
  apiKeyUsage: ApiKeyUsageRepository
  idempotency: IdempotencyRepository
  /** Transactions over people, messages and idempotency records together. */
  unitOfWork: UnitOfWork
  /** The recorded changes, read in commit order. */
  changeFeed: ChangeFeed
  passwords: PasswordHasher
  revocations: KeyRevocations
  clock: Clock
  ids: IdGenerator
  events: MessageEvents
  webhooks: WebhookRepository
  /** Seals the webhooks' signing secrets at rest. */
  webhookSecrets: WebhookSecretBox
  /** Which URLs webhooks may be sent to. */
  webhookDestinations: WebhookDestinations
}
