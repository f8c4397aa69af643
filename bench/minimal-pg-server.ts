import { randomUUID } from 'node:crypto'
import Fastify from 'fastify'
import pg from 'pg'

/*
 * The reference point on PostgreSQL: minimal Fastify over `pg` with a pool of
 * 10 (the service's default) and named prepared statements, on the same
 * database, with no authentication, validation, limits, headers or metrics.
 */
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })
const BY_ID = { name: 'minimal_person_by_id', text: 'select id, name, age, email, has_address, street, city, country, created_at, updated_at, version from person where id = $1' }
const PAGE = { name: 'minimal_people_page', text: 'select id, name from person order by id limit $1' }
const INSERT = {
  name: 'minimal_person_insert',
  text: `insert into person (id, name, name_lower, age, has_address, created_at, updated_at, version)
         values ($1, $2, lower($2), $3, 0, $4, $4, 1) returning id, name, age, created_at, updated_at, version`
}

const app = Fastify({ logger: false })
app.get<{ Params: { id: string } }>('/person/:id', async (request, reply) => {
  const { rows } = await pool.query({ ...BY_ID, values: [request.params.id] })
  return rows[0] ?? reply.code(404).send({ error: 'not found' })
})
app.get<{ Querystring: { limit?: string } }>('/people', async (request) =>
  (await pool.query({ ...PAGE, values: [Number(request.query.limit ?? 20)] })).rows)
app.post<{ Body: { name: string, age?: number } }>('/person', async (request, reply) => {
  const now = new Date().toISOString()
  const { rows } = await pool.query({ ...INSERT, values: [randomUUID(), request.body.name, request.body.age ?? null, now] })
  return reply.code(201).send(rows[0])
})
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) })
process.on('SIGTERM', () => { app.close().then(() => pool.end()).then(() => process.exit(0), () => process.exit(1)) })
