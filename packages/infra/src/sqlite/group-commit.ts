import {
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult
} from 'kysely'
import type { SqliteConnection, SqliteStatement } from './better-sqlite3.js'

interface Waiter {
  resolve(): void
  reject(error: unknown): void
}

/** The savepoint an explicit (Kysely) transaction runs in, inside the group. */
const TRANSACTION = 'kysely_transaction'

/**
 * Group commit for SQLite.
 *
 * With `synchronous = FULL`, every COMMIT waits for an fsync of the WAL, and
 * better-sqlite3 waits on the event loop: one write per fsync caps writes at a
 * few hundred per second whatever the CPU. Here every write that arrives while
 * the event loop is busy joins one open transaction; the transaction commits
 * once, on the next turn of the loop, and only then does each write resolve.
 * One fsync then covers every request of that turn, and an acknowledged write
 * is still on disk before its caller hears of it.
 *
 * - A failed statement undoes itself only (SQLite's statement-level rollback),
 *   so one request's constraint error does not touch the others.
 * - An explicit transaction runs in a savepoint of the group, holding the
 *   connection to itself until it ends, and resolves after the group commits.
 * - Reads never see a write before it is durable: while a group is open, a
 *   read waits for its commit.
 * - If the commit fails, or SQLite rolls the group back on its own (I/O error,
 *   disk full), every write of the group fails with that error: none was
 *   acknowledged.
 */
export class GroupCommitDriver implements Driver {
  readonly #db: SqliteConnection
  readonly #prepare: (sql: string) => SqliteStatement
  /** Writes done in the open group, waiting for its COMMIT. */
  #waiters: Waiter[] = []
  #open = false
  /** The commit came due while an explicit transaction held the connection. */
  #commitDue = false
  /** The explicit transaction holding the connection; everyone else waits for it. */
  #held: { done: Promise<void>, release(): void } | undefined
  /**
   * Connections handed to Kysely and not yet released: queries issued and
   * still on their way here. Once Kysely has initialised the driver (at the
   * first query: the migrations) it asks for the connection as a query is
   * issued, so a direct read (`readNow`) issued after them waits its turn.
   */
  #inFlight = 0

  constructor (db: SqliteConnection, prepare: (sql: string) => SqliteStatement) {
    this.#db = db
    this.#prepare = prepare
  }

  async init (): Promise<void> {}

  // Connections are views of the one database: exclusivity is per statement,
  // or per explicit transaction, enforced here rather than by a pool of one.
  async acquireConnection (): Promise<DatabaseConnection> {
    this.#inFlight++
    return new GroupCommitConnection(this)
  }

  async releaseConnection (): Promise<void> {
    this.#inFlight--
  }

  async beginTransaction (connection: DatabaseConnection): Promise<void> {
    while (this.#held !== undefined) await this.#held.done
    let release = (): void => {}
    this.#held = { done: new Promise((resolve) => { release = resolve }), release }
    try {
      this.#join()
      this.#prepare(`savepoint ${TRANSACTION}`).run([])
    } catch (error) {
      this.#release()
      this.#checkGroup(error)
      throw error
    }
    (connection as GroupCommitConnection).inTransaction = true
  }

  async commitTransaction (connection: DatabaseConnection): Promise<void> {
    // Waiting before ending: the commit may run as the transaction ends
    // (#release), and its failure must reach this transaction too.
    const durable = this.#committed()
    try {
      this.#end(connection, [`release ${TRANSACTION}`])
    } catch (error) {
      durable.catch(() => {})
      throw error
    }
    await durable
  }

  async rollbackTransaction (connection: DatabaseConnection): Promise<void> {
    this.#end(connection, [`rollback to ${TRANSACTION}`, `release ${TRANSACTION}`])
  }

  async destroy (): Promise<void> {
    while (this.#held !== undefined) await this.#held.done
    if (this.#open) this.#commit()
    this.#db.close()
  }

  /** Runs a statement for a connection; `inTransaction`: it holds the connection. */
  async execute (compiled: CompiledQuery, inTransaction: boolean): Promise<QueryResult<unknown>> {
    const statement = this.#prepare(compiled.sql)
    const parameters = compiled.parameters as unknown[]
    if (inTransaction) return run(statement, parameters)
    for (;;) {
      if (this.#held !== undefined) await this.#held.done
      // Another request's failed commit is its own answer, not this read's.
      else if (statement.readonly && this.#open) await this.#committed().catch(() => {})
      else break
    }
    if (statement.readonly) return run(statement, parameters)
    this.#join()
    let result: QueryResult<unknown>
    try {
      result = run(statement, parameters)
    } catch (error) {
      this.#checkGroup(error)
      throw error
    }
    await this.#committed()
    return result
  }

  /**
   * A read-only statement's rows at once, when nothing stands before it: no
   * query issued earlier still on its way, no explicit transaction holding
   * the connection, no group waiting for its commit. Undefined otherwise, or
   * for a statement that writes: the caller then goes through Kysely to
   * `execute`, in the order queries were issued.
   */
  readNow (sql: string, parameters: unknown[]): unknown[] | undefined {
    if (this.#inFlight > 0 || this.#held !== undefined || this.#open) return undefined
    const statement = this.#prepare(sql)
    return statement.readonly ? run(statement, parameters).rows : undefined
  }

  /** Opens the group transaction if none is open, committing on the next turn of the loop. */
  #join (): void {
    if (this.#open) return
    this.#db.exec('begin immediate')
    this.#open = true
    setImmediate(() => this.#commitWhenFree())
  }

  #commitWhenFree (): void {
    // An explicit transaction in the middle of its statements: commit as it
    // ends, before the next one can start (a steady stream of them must not
    // hold the commit back).
    if (this.#held !== undefined) this.#commitDue = true
    else if (this.#open) this.#commit()
  }

  #commit (): void {
    const waiters = this.#waiters
    this.#waiters = []
    this.#open = false
    try {
      this.#db.exec('commit')
    } catch (error) {
      if (this.#db.inTransaction) this.#db.exec('rollback')
      for (const waiter of waiters) waiter.reject(error)
      return
    }
    for (const waiter of waiters) waiter.resolve()
  }

  /**
   * SQLite rolls a whole transaction back on some errors (I/O, disk full):
   * then the group is lost, and every write in it fails with that error.
   */
  #checkGroup (cause: unknown): void {
    if (!this.#open || this.#db.inTransaction) return
    const waiters = this.#waiters
    this.#waiters = []
    this.#open = false
    for (const waiter of waiters) waiter.reject(cause)
  }

  /** Resolves when the open group is durable; at once when none is open. */
  async #committed (): Promise<void> {
    if (!this.#open) return
    await new Promise<void>((resolve, reject) => { this.#waiters.push({ resolve, reject }) })
  }

  // Prepared once (#prepare keeps them): exec parsed them again for every transaction.
  #end (connection: DatabaseConnection, statements: readonly string[]): void {
    (connection as GroupCommitConnection).inTransaction = false
    try {
      for (const statement of statements) this.#prepare(statement).run([])
    } catch (error) {
      this.#release()
      this.#checkGroup(error)
      throw error
    }
    this.#release()
  }

  #release (): void {
    const held = this.#held
    this.#held = undefined
    if (this.#commitDue) {
      this.#commitDue = false
      if (this.#open && this.#db.inTransaction) this.#commit()
    }
    held?.release()
  }
}

const run = (statement: SqliteStatement, parameters: unknown[]): QueryResult<unknown> => {
  if (statement.reader) return { rows: statement.all(parameters) }
  const { changes } = statement.run(parameters)
  return { numAffectedRows: BigInt(changes), rows: [] }
}

class GroupCommitConnection implements DatabaseConnection {
  inTransaction = false
  readonly #driver: GroupCommitDriver

  constructor (driver: GroupCommitDriver) {
    this.#driver = driver
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    return this.#driver.execute(compiled, this.inTransaction) as Promise<QueryResult<R>>
  }

  async * streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported: page with keyset queries instead')
  }
}

/** Kysely's SQLite dialect over a group-commit driver. */
export const groupCommitDialect = (driver: GroupCommitDriver): Dialect => ({
  createAdapter: () => new SqliteAdapter(),
  createDriver: () => driver,
  createQueryCompiler: () => new SqliteQueryCompiler(),
  createIntrospector: (kysely: Kysely<unknown>) => new SqliteIntrospector(kysely)
})
