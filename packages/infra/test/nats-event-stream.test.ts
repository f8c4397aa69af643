import { randomUUID } from 'node:crypto'
import t from 'tap'
import { connect } from '@nats-io/transport-node'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { openNatsEventStream } from '@people-service/infra'
import { ownNatsServer, skipWithoutNats, skipWithoutNatsServer, testNatsUrl } from '@people-service/infra/testing'

t.test('events go out on <prefix>.<type> with their id as Nats-Msg-Id, once each, in order', { skip: skipWithoutNats }, async (t) => {
  const url = await testNatsUrl()
  const prefix = `people${randomUUID().slice(0, 8)}`
  const streamName = `EVENTS_${prefix.toUpperCase()}`
  const stream = await openNatsEventStream({ url, subjectPrefix: prefix, retentionDays: 7, streamName })
  t.teardown(() => stream.close())
  const events = [1, 2, 3].map((n) => ({ id: randomUUID(), type: n === 2 ? 'person.updated' : 'person.created', data: { n } }))
  for (const event of events) t.equal((await stream.publish(event)).duplicate, false)
  t.equal((await stream.publish(events[1]!)).duplicate, true, 'a repeated publish is dropped by the de-dup window')

  const reader = await connect({ servers: url })
  t.teardown(() => reader.close())
  const manager = await jetstreamManager(reader)
  const info = await manager.streams.info(streamName)
  t.same(info.config.subjects, [`${prefix}.>`])
  t.equal(info.config.max_age, 7 * 86_400 * 1e9, 'max_age is the retention')
  t.equal(info.state.messages, 3, 'each event stored once')
  const consumer = await jetstream(reader).consumers.get(streamName)
  const seen: Array<{ subject: string, id: string | undefined, data: unknown }> = []
  const messages = await consumer.fetch({ max_messages: 3, expires: 2000 })
  for await (const message of messages) seen.push({ subject: message.subject, id: message.headers?.get('Nats-Msg-Id'), data: message.json() })
  t.same(seen, events.map((e) => ({ subject: `${prefix}.${e.type}`, id: e.id, data: e.data })))
})

t.test('a broker stopped mid-stream and restarted on the same store: the events retried after it keep their order, none lost, none twice', { skip: skipWithoutNatsServer }, async (t) => {
  const nats = await ownNatsServer()
  t.teardown(() => nats.remove())
  const stream = await openNatsEventStream({ url: nats.url, subjectPrefix: 'people', retentionDays: 1 })
  t.teardown(() => stream.close())
  const events = Array.from({ length: 6 }, (_, n) => ({ id: randomUUID(), type: 'person.created', data: { n } }))
  for (const event of events.slice(0, 3)) await stream.publish(event)
  await nats.stop()
  await t.rejects(stream.publish(events[3]!), 'a publish fails while NATS is away')
  await nats.restart()
  // The caller retries from its last acknowledged event, which may repeat one JetStream already has.
  for (let tries = 0; ; tries++) {
    try {
      for (const event of events.slice(2)) await stream.publish(event)
      break
    } catch (error) {
      if (tries === 50) throw error
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  const reader = await connect({ servers: nats.url })
  t.teardown(() => reader.close())
  const consumer = await jetstream(reader).consumers.get('PEOPLE_EVENTS')
  const seen: unknown[] = []
  for await (const message of await consumer.fetch({ max_messages: 10, expires: 1000 })) seen.push(message.json())
  t.same(seen, events.map((e) => e.data), 'every event once, in order')
})
