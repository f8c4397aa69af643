import { GRAPHQL_LIMITS } from '@people-service/http'

/** The service's configuration, read once from the environment (see the README's table). */
export interface Config {
  host: string
  port: number
  databaseUrl: string
  databasePoolSize: number
  sqliteSynchronous: 'FULL' | 'NORMAL'
  logLevel: string
  production: boolean
  /** Worst-case cost budget of one GraphQL operation (GRAPHQL_MAX_COST). */
  graphqlMaxCost: number
  /** Browser origins allowed by CORS (CORS_ORIGINS, comma-separated). */
  corsOrigins: string[]
  /** Event-loop delay in ms past which requests get 503 (MAX_EVENT_LOOP_DELAY_MS). */
  maxEventLoopDelay: number
}

export class ConfigError extends Error {
  constructor (variable: string, problem: string) {
    super(`${variable} ${problem}`)
    this.name = 'ConfigError'
  }
}

type Env = Record<string, string | undefined>

const integer = (env: Env, name: string, fallback: number, min: number, max: number): number => {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max}, not ${JSON.stringify(raw)}`)
  }
  return value
}

const oneOf = <T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T => {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, not ${JSON.stringify(raw)}`)
  }
  return raw as T
}

const origins = (raw: string | undefined): string[] => {
  const list = (raw ?? '').split(',').map((origin) => origin.trim()).filter(Boolean)
  for (const origin of list) {
    if (origin === '*' || !/^https?:\/\/[^/\s]+$/.test(origin)) {
      throw new ConfigError('CORS_ORIGINS', `must list origins like https://app.example.org, not ${JSON.stringify(origin)}`)
    }
  }
  return list
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

export const loadConfig = (env: Env = process.env): Config => {
  const databaseUrl = env.DATABASE_URL || 'sqlite:./data/people.db'
  if (!/^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', 'must be sqlite:<path>, sqlite::memory: or postgres://…')
  }
  return {
    host: env.HOST || '127.0.0.1',
    port: integer(env, 'PORT', 3000, 0, 65535),
    databaseUrl,
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
    sqliteSynchronous: oneOf(env, 'SQLITE_SYNCHRONOUS', 'FULL', ['FULL', 'NORMAL']),
    logLevel: oneOf(env, 'LOG_LEVEL', 'info', LOG_LEVELS),
    production: env.NODE_ENV === 'production',
    graphqlMaxCost: integer(env, 'GRAPHQL_MAX_COST', GRAPHQL_LIMITS.defaultMaxCost, 1, 1_000_000_000),
    corsOrigins: origins(env.CORS_ORIGINS),
    maxEventLoopDelay: integer(env, 'MAX_EVENT_LOOP_DELAY_MS', 1000, 10, 60_000)
  }
}
