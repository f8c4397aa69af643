import { localKeyRevocations, noMessageEvents, scryptPasswordHasher, systemClock, uuidv7Generator } from '@people-service/domain'
import { buildApp } from '@people-service/http'
import { createDatabase, createRepositories, migrateToLatest, ping } from '@people-service/infra'
import type { Config } from './config.js'

export interface RunningServer {
  app: Awaited<ReturnType<typeof buildApp>>
  /** Stops taking connections, lets in-flight requests finish, closes the database. */
  close(): Promise<void>
}

/** Opens and migrates the database, builds the app and listens: the composition root. */
export const startServer = async (config: Config): Promise<RunningServer> => {
  const database = createDatabase({
    url: config.databaseUrl,
    poolSize: config.databasePoolSize,
    sqliteSynchronous: config.sqliteSynchronous
  })
  try {
    await migrateToLatest(database)
  } catch (error) {
    await database.close()
    throw error
  }
  const app = await buildApp({
    ports: {
      ...createRepositories(database),
      passwords: scryptPasswordHasher(),
      revocations: localKeyRevocations(),
      clock: systemClock,
      ids: uuidv7Generator(),
      events: noMessageEvents
    },
    ready: () => ping(database),
    logger: {
      level: config.logLevel,
      redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]'], censor: '[redacted]' }
    }
  })
  app.addHook('onClose', async () => { await database.close() })
  await app.listen({ host: config.host, port: config.port })
  return { app, close: () => app.close() }
}
