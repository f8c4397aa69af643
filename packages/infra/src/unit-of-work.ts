import type { IdempotencyRepository, MessageRepository, PersonRepository, TransactionPorts, UnitOfWork } from '@people-service/domain'
import type { Kysely, Transaction } from 'kysely'
import type { Database, Dialect } from './database.js'
import { translateErrors } from './database-errors.js'
import { kyselyIdempotencyRepository } from './idempotency/kysely-idempotency.repository.js'
import { kyselyMessageRepository } from './message/kysely-message.repository.js'
import { kyselyPersonRepository } from './person/kysely-person.repository.js'

/** The repositories over one transaction, each made when the work first uses it. */
const portsOver = (trx: Transaction<Database>, dialect: Dialect): TransactionPorts => {
  let people: PersonRepository | undefined
  let messages: MessageRepository | undefined
  let idempotency: IdempotencyRepository | undefined
  return {
    get people () { return (people ??= kyselyPersonRepository(trx, dialect)) },
    get messages () { return (messages ??= kyselyMessageRepository(trx, dialect)) },
    get idempotency () { return (idempotency ??= kyselyIdempotencyRepository(trx)) }
  }
}

/**
 * A Kysely transaction: on PostgreSQL one connection of the pool, BEGIN to
 * COMMIT; on SQLite a savepoint inside the group commit, which holds the
 * connection until it ends and resolves once the group is on disk (see
 * sqlite/group-commit.ts).
 */
export const kyselyUnitOfWork = (db: Kysely<Database>, dialect: Dialect): UnitOfWork => translateErrors({
  run: <T>(work: (tx: TransactionPorts) => Promise<T>): Promise<T> =>
    db.transaction().execute((trx) => work(portsOver(trx, dialect)))
})
