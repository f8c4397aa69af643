export { createDatabase, type DatabaseOptions } from './create-database.js'
export type { Database, DatabaseHandle, Dialect } from './database.js'
export { migrateToLatest } from './migrate.js'
export { createRepositories } from './repositories.js'
