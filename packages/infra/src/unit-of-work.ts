import type {
  ApiKeyRepository, FriendshipRepository, IdempotencyRepository, MessageRepository, PersonRepository, TransactionPorts, UnitOfWork
} from '@people-service/domain'
import type { Kysely, Transaction } from 'kysely'
import { kyselyApiKeyRepository } from './api-key/kysely-api-key.repository.js'
import type { Database, Dialect } from './database.js'
import { retryDeadlocks, translateErrors } from './database-errors.js'
import { withEvents, type EventOutbox } from './event/event-log.js'
import { kyselyFriendshipRepository } from './friendship/kysely-friendship.repository.js'
import { kyselyIdempotencyRepository } from './idempotency/kysely-idempotency.repository.js'
import { kyselyMessageRepository } from './message/kysely-message.repository.js'
import { kyselyPersonRepository } from './person/kysely-person.repository.js'

/** The repositories over one transaction, each made when the work first uses it. */
const portsOver = (trx: Transaction<Database>, dialect: Dialect, outbox: EventOutbox, changes: TransactionPorts['changes']): TransactionPorts => {
  let people: PersonRepository | undefined
  let friendships: FriendshipRepository | undefined
  let messages: MessageRepository | undefined
  let apiKeys: ApiKeyRepository | undefined
  let idempotency: IdempotencyRepository | undefined
  return {
    get people () { return (people ??= kyselyPersonRepository(trx, dialect, outbox)) },
    get friendships () { return (friendships ??= kyselyFriendshipRepository(trx, dialect)) },
    get messages () { return (messages ??= kyselyMessageRepository(trx, dialect)) },
    get apiKeys () { return (apiKeys ??= kyselyApiKeyRepository(trx)) },
    get idempotency () { return (idempotency ??= kyselyIdempotencyRepository(trx)) },
    changes
  }
}

/**
 * A Kysely transaction: on PostgreSQL one connection of the pool, BEGIN to
 * COMMIT; on SQLite a savepoint inside the group commit, which holds the
 * connection until it ends and resolves once the group is on disk (see
 * sqlite/group-commit.ts). The events the work recorded are written as its
 * last statement (event/event-log.ts). A transaction PostgreSQL rolled back
 * to break a deadlock runs again, from the start.
 */
export const kyselyUnitOfWork = (db: Kysely<Database>, dialect: Dialect, outbox: EventOutbox): UnitOfWork => translateErrors({
  run: <T>(work: (tx: TransactionPorts) => Promise<T>): Promise<T> =>
    retryDeadlocks(() => withEvents(db, outbox, (trx, changes) => work(portsOver(trx as Transaction<Database>, dialect, outbox, changes))))
})
