// Events/s through openNatsEventStream, one publish awaited at a time (the relay's order-keeping way),
// against a private nats-server -js: npm run bench:nats -- [count]
import { randomUUID } from 'node:crypto'
import { openNatsEventStream } from '@people-service/infra'
import { ownNatsServer } from '@people-service/infra/testing'

const count = Number(process.argv[2] ?? 5000)
const nats = await ownNatsServer()
const stream = await openNatsEventStream({ url: nats.url, subjectPrefix: 'people', retentionDays: 1 })
const started = performance.now()
for (let n = 0; n < count; n++) await stream.publish({ id: randomUUID(), type: 'person.updated', data: { n, name: 'Ada Lovelace' } })
const seconds = (performance.now() - started) / 1000
console.log(`${count} events in ${seconds.toFixed(2)} s: ${Math.round(count / seconds)} events/s (sequential, acknowledged)`)
await stream.close()
await nats.remove()
