import type { Message } from './message.js'

/**
 * Port: tells whoever listens that a message was sent (subscriptions).
 * In-process by default; a shared broker when several instances run.
 */
export interface MessageEvents {
  published(message: Message): Promise<void>
}

export const noMessageEvents: MessageEvents = { published: async () => {} }
