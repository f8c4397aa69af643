import type { IdempotencyRepository } from '../idempotency/idempotency.repository.js'
import type { MessageRepository } from '../message/message.repository.js'
import type { PersonRepository } from '../person/person.repository.js'

/** The repositories a unit of work hands its work, every one bound to its transaction. */
export interface TransactionPorts {
  people: PersonRepository
  messages: MessageRepository
  idempotency: IdempotencyRepository
}

/**
 * Port: runs `work` in one transaction. Every write made through the ports
 * it is given commits together when it resolves, or none does when it
 * throws (the error is then thrown on).
 */
export interface UnitOfWork {
  run<T>(work: (tx: TransactionPorts) => Promise<T>): Promise<T>
}
