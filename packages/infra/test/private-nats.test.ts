import { connect } from 'node:net'
import t from 'tap'
import { ownNatsServer, skipWithoutNats, skipWithoutNatsServer, testNatsUrl } from '@people-service/infra/testing'

/** The server's INFO line, parsed: what a client sees on connecting. */
const info = (url: string): Promise<{ jetstream?: boolean, port: number }> => new Promise((resolve, reject) => {
  const { hostname, port } = new URL(url)
  const socket = connect({ host: hostname, port: Number(port) })
  let reply = ''
  socket.setTimeout(2000, () => { socket.destroy(); reject(new Error('no INFO within 2 s')) })
  socket.on('error', reject)
  socket.on('data', (chunk) => {
    reply += chunk.toString()
    const end = reply.indexOf('\r\n')
    if (end === -1) return
    socket.destroy()
    resolve(JSON.parse(reply.slice('INFO '.length, end)))
  })
})

t.test('the tests get a NATS server with JetStream, never the machine one on 4222', { skip: skipWithoutNats }, async (t) => {
  const url = await testNatsUrl()
  const greeting = await info(url)
  t.equal(greeting.jetstream, true, 'JetStream is on')
  if (!process.env.TEST_NATS_URL) t.not(greeting.port, 4222, 'a private port')
})

t.test('a NATS server of its own stops and starts again on the same port', { skip: skipWithoutNatsServer }, async (t) => {
  const nats = await ownNatsServer()
  t.teardown(() => nats.remove())
  t.equal((await info(nats.url)).jetstream, true)
  await nats.stop()
  await t.rejects(info(nats.url), 'nothing answers while it is stopped')
  await nats.restart()
  t.equal((await info(nats.url)).jetstream, true, 'back on the same URL')
})
