import { DomainError } from '@people-service/domain'

interface DriverError {
  code?: unknown
  message?: unknown
}

const codeOf = (error: unknown): string =>
  typeof error === 'object' && error !== null ? String((error as DriverError).code ?? '') : ''

/** A row referenced a parent that does not exist (SQLite and PostgreSQL codes). */
export const isForeignKeyViolation = (error: unknown): boolean =>
  ['SQLITE_CONSTRAINT_FOREIGNKEY', '23503'].includes(codeOf(error))

/** A NOT NULL column got none (SQLite and PostgreSQL codes). */
export const isNotNullViolation = (error: unknown): boolean =>
  ['SQLITE_CONSTRAINT_NOTNULL', '23502'].includes(codeOf(error))

/** A unique index refused a duplicate (SQLite and PostgreSQL codes). */
export const isUniqueViolation = (error: unknown): boolean =>
  ['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY', '23505'].includes(codeOf(error))

/**
 * PostgreSQL broke a deadlock by rolling this statement or transaction back
 * (40P01): nothing of it stays, and running it again is safe.
 */
const isDeadlock = (error: unknown): boolean => codeOf(error) === '40P01'

const DEADLOCK_ATTEMPTS = 3

/**
 * Runs `work`, one statement or one transaction, again when PostgreSQL
 * chose it to break a deadlock: two requests taking the same rows in
 * opposite order (two friends deleted at once) is an ordinary race, not
 * the caller's error.
 */
export const retryDeadlocks = async <T>(work: () => Promise<T>): Promise<T> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work()
    } catch (error) {
      if (!isDeadlock(error) || attempt === DEADLOCK_ATTEMPTS) throw error
    }
  }
}

// Connection-level failures: the database is away, restarting or saturated.
const UNAVAILABLE_CODES = new Set([
  'SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_IOERR', 'SQLITE_FULL',
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN',
  '57P01', '57P02', '57P03', '53300', '08000', '08001', '08003', '08006'
])
const UNAVAILABLE_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly/i

export const isUnavailable = (error: unknown): boolean =>
  UNAVAILABLE_CODES.has(codeOf(error)) ||
  (error instanceof Error && UNAVAILABLE_MESSAGES.test(error.message))

/**
 * Wraps every method of a repository so that a database that cannot be
 * reached surfaces as the domain's DEPENDENCY_UNAVAILABLE, not as a driver
 * error with SQL in its message. Domain errors pass through untouched.
 */
export const translateErrors = <T extends object>(repository: T): T => {
  const wrapped = {} as Record<string, unknown>
  for (const [name, method] of Object.entries(repository)) {
    wrapped[name] = typeof method !== 'function'
      ? method
      : async (...args: unknown[]) => {
        try {
          return await (method as (...a: unknown[]) => Promise<unknown>).apply(repository, args)
        } catch (error) {
          if (isUnavailable(error)) {
            throw new DomainError('DEPENDENCY_UNAVAILABLE', 'the database is unavailable, try again shortly')
          }
          throw error
        }
      }
  }
  return wrapped as T
}
