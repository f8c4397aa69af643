import { personNotFound } from '../errors.js'
import { checkMessageText, type Message } from '../message/message.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'

export interface SendMessageInput {
  personId: string
  text: string
  senderId: string
}

/** Checks and stores a message, announcing nothing: the part of a send that belongs in a transaction. */
export const storeMessage = (ports: Pick<Ports, 'messages' | 'clock' | 'ids'>) =>
  async (input: SendMessageInput): Promise<Message> => {
    const text = checkMessageText(input.text)
    // A malformed id names nobody. For a well-formed one the insert is the
    // lookup: the repository refuses a recipient it does not hold with
    // PERSON_NOT_FOUND, so the person's row is not read first.
    if (!isId(input.personId)) throw personNotFound(input.personId)
    const message: Message = {
      id: ports.ids.next(),
      personId: input.personId,
      text,
      senderId: input.senderId,
      sentAt: ports.clock.now()
    }
    await ports.messages.insert(message)
    return message
  }

/** Stores a message, then tells subscribers: they never hear of one that is not stored. */
export const sendMessage = (ports: Pick<Ports, 'messages' | 'clock' | 'ids' | 'events'>) => {
  const store = storeMessage(ports)
  return async (input: SendMessageInput): Promise<Message> => {
    const message = await store(input)
    await ports.events.published(message)
    return message
  }
}
