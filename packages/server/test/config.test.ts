import t from 'tap'
import { loadConfig } from '../src/config.js'

t.test('the defaults of the README', async (t) => {
  t.same(loadConfig({}), {
    host: '127.0.0.1',
    port: 3000,
    databaseUrl: 'sqlite:./data/people.db',
    databasePoolSize: 10,
    sqliteSynchronous: 'FULL',
    logLevel: 'info',
    production: false,
    graphqlMaxCost: 50_000,
    corsOrigins: [],
    maxEventLoopDelay: 1000
  })
})

t.test('values are read and checked', async (t) => {
  const config = loadConfig({ HOST: '0.0.0.0', PORT: '8080', DATABASE_URL: 'postgres://u@h/db', LOG_LEVEL: 'warn', NODE_ENV: 'production' })
  t.match(config, { host: '0.0.0.0', port: 8080, databaseUrl: 'postgres://u@h/db', logLevel: 'warn', production: true })
  t.throws(() => loadConfig({ PORT: '70000' }), /PORT must be a whole number from 0 to 65535/)
  t.throws(() => loadConfig({ PORT: '-1' }), /PORT/)
  t.throws(() => loadConfig({ DATABASE_POOL_SIZE: '0' }), /DATABASE_POOL_SIZE/)
  t.throws(() => loadConfig({ SQLITE_SYNCHRONOUS: 'OFF' }), /SQLITE_SYNCHRONOUS must be one of FULL, NORMAL/)
  t.throws(() => loadConfig({ GRAPHQL_MAX_COST: 'lots' }), /GRAPHQL_MAX_COST/)
  t.equal(loadConfig({ GRAPHQL_MAX_COST: '1000' }).graphqlMaxCost, 1000)
  t.same(loadConfig({ CORS_ORIGINS: 'https://a.example, http://localhost:5173' }).corsOrigins, ['https://a.example', 'http://localhost:5173'])
  t.throws(() => loadConfig({ CORS_ORIGINS: '*' }), /CORS_ORIGINS/)
})
