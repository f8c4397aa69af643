import type { ApiKeyRepository } from '../api-key/api-key.repository.js'
import type { ChangeLog } from '../change/change-event.js'
import type { FriendshipRepository } from '../friendship/friendship.repository.js'
import type { IdempotencyRepository } from '../idempotency/idempotency.repository.js'
import type { MessageRepository } from '../message/message.repository.js'
import type { PersonRepository } from '../person/person.repository.js'

/** The repositories a unit of work hands its work, every one bound to its transaction. */
export interface TransactionPorts {
  people: PersonRepository
  friendships: FriendshipRepository
  messages: MessageRepository
  apiKeys: ApiKeyRepository
  idempotency: IdempotencyRepository
  /** The events of the work's changes: they commit with them, or neither does. */
  changes: ChangeLog
}

/**
 * Port: runs `work` in one transaction. Every write made through the ports
 * it is given commits together when it resolves, or none does when it
 * throws (the error is then thrown on). The events it recorded are written
 * last, just before the commit. A store may run `work` again when the
 * database broke a deadlock by rolling it back: it must do nothing else
 * that cannot be repeated.
 */
export interface UnitOfWork {
  run<T>(work: (tx: TransactionPorts) => Promise<T>): Promise<T>
}
