import { createDatabase, DatabaseFileError, type DatabaseHandle, type DatabaseOptions } from '@people-service/infra'
import { ConfigError } from './config.js'

/**
 * Opens the database DATABASE_URL names. A SQLite file that cannot be opened
 * (a folder that cannot be made or written, a read-only file) is a setting
 * the operator must change: a ConfigError that names the variable, the path
 * and the cause, which the commands turn into exit code 2.
 */
export const openDatabase = (options: DatabaseOptions): DatabaseHandle => {
  try {
    return createDatabase(options)
  } catch (error) {
    if (error instanceof DatabaseFileError) throw new ConfigError('DATABASE_URL', `(${options.url}): ${error.message}`)
    throw error
  }
}
