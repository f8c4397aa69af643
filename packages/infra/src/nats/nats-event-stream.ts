import { connect, type NatsConnection } from '@nats-io/transport-node'
import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream'

/** One event as it goes out: its id is the Nats-Msg-Id, so a publish repeated after a lost ack is dropped by JetStream. */
export interface OutgoingEvent {
  id: string
  type: string
  data: unknown
}

export interface NatsEventStream {
  /** Publishes one event on `<prefix>.<type>` and resolves once JetStream has stored it (or had it already). */
  publish(event: OutgoingEvent): Promise<{ duplicate: boolean, seq: number }>
  close(): Promise<void>
}

export interface NatsEventStreamOptions {
  url: string
  /** EVENTS_NATS_SUBJECT_PREFIX, `people` by default. */
  subjectPrefix: string
  /** EVENTS_RETENTION_DAYS: how long the stream keeps an event. */
  retentionDays: number
  /** The stream's name, PEOPLE_EVENTS. */
  streamName?: string
}

const NANOS_PER_DAY = 86_400n * 1_000_000_000n

/**
 * Connects to NATS and makes sure the stream exists (subjects `<prefix>.>`,
 * max_age the retention), creating it when missing. The client reconnects
 * on its own without end; a publish while NATS is away fails, and the caller
 * tries the same event again later.
 */
export const openNatsEventStream = async (options: NatsEventStreamOptions): Promise<NatsEventStream> => {
  const streamName = options.streamName ?? 'PEOPLE_EVENTS'
  const connection: NatsConnection = await connect({ servers: options.url, maxReconnectAttempts: -1, name: 'people-service events' })
  try {
    const manager = await jetstreamManager(connection)
    const config = { subjects: [`${options.subjectPrefix}.>`], max_age: Number(BigInt(options.retentionDays) * NANOS_PER_DAY) }
    try {
      await manager.streams.info(streamName)
      await manager.streams.update(streamName, config)
    } catch {
      await manager.streams.add({ name: streamName, ...config })
    }
  } catch (error) {
    await connection.close()
    throw error
  }
  const js: JetStreamClient = jetstream(connection)
  return {
    async publish (event) {
      const ack = await js.publish(`${options.subjectPrefix}.${event.type}`, JSON.stringify(event.data), { msgID: event.id })
      return { duplicate: ack.duplicate, seq: ack.seq }
    },
    close: () => connection.close()
  }
}
