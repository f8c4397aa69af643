// The same SQLite binding as the service's (see packages/infra/src/sqlite/better-sqlite3.ts).
import { BetterSqlite3 as Database } from '@people-service/infra'
import Fastify from 'fastify'

/*
 * The reference point for the database-bound scenarios: minimal Fastify over
 * better-sqlite3 on the same file, with no authentication, validation, rate
 * limits, headers or metrics. The gap between it and the real server is what
 * those cost.
 */
const db = new Database(process.env.DATABASE_FILE ?? '', { readonly: true })
// The columns of a person as stored, without the key inside the database.
const byId = db.prepare('select id, name, name_lower, age, email, has_address, street, city, country, created_at, updated_at, version from person where id = ?')
const page = db.prepare('select id, name from person order by id limit ?')
const app = Fastify({ logger: false })
app.get<{ Params: { id: string } }>('/person/:id', async (request, reply) => {
  const row = byId.get(request.params.id)
  return row ?? reply.code(404).send({ error: 'not found' })
})
app.get<{ Querystring: { limit?: string } }>('/people', async (request) => page.all(Number(request.query.limit ?? 20)))
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) })
process.on('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
