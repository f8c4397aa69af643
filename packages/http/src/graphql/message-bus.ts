import type { Message, MessageEvents } from '@people-service/domain'
import mqemitter, { type MQEmitter } from 'mqemitter'

export const MESSAGE_SENT = 'MESSAGE_SENT'

/** A message as it travels between instances: JSON-safe, so a broker can carry it. */
export interface MessageSentEvent {
  messageSent: Omit<Message, 'sentAt'> & { sentAt: string }
}

/**
 * Where sent messages travel to subscribers. `events` is the domain's port
 * (the use cases publish through it); `emitter` is what Mercurius listens on.
 * In process by default; a shared broker with the same emitter interface
 * (mqemitter-redis) takes its place when several instances run.
 */
export interface MessageBus {
  events: MessageEvents
  emitter: MQEmitter
  close(): Promise<void>
}

export const toEvent = (message: Message): MessageSentEvent =>
  ({ messageSent: { ...message, sentAt: message.sentAt.toISOString() } })

export const fromEvent = ({ messageSent }: MessageSentEvent): Message =>
  ({ ...messageSent, sentAt: new Date(messageSent.sentAt) })

/** A message bus over any mqemitter-compatible emitter. */
export const messageBusOver = (emitter: MQEmitter): MessageBus => ({
  emitter,
  events: {
    published: (message) => new Promise<void>((resolve, reject) => {
      emitter.emit({ topic: MESSAGE_SENT, payload: toEvent(message) }, (error) => (error ? reject(error) : resolve()))
    })
  },
  close: () => new Promise<void>((resolve) => emitter.close(() => resolve()))
})

export const inProcessMessageBus = (): MessageBus => messageBusOver(mqemitter())
