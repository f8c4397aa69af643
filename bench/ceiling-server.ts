import Fastify from 'fastify'

/*
 * The ceiling: bare Fastify answering static JSON. Every benchmark figure is
 * a ratio to this server measured in the same run.
 */
const app = Fastify({ logger: false })
app.get('/hello', async () => ({ hello: 'world' }))
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) })
process.on('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
