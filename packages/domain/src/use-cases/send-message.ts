import { checkMessageText, type Message } from '../message/message.js'
import type { Ports } from '../ports.js'
import { getPerson } from './get-person.js'

export interface SendMessageInput {
  personId: string
  text: string
  senderId: string
}

export const sendMessage = (ports: Pick<Ports, 'people' | 'messages' | 'clock' | 'ids' | 'events'>) => {
  const get = getPerson(ports)
  return async (input: SendMessageInput): Promise<Message> => {
    const text = checkMessageText(input.text)
    await get(input.personId)
    const message: Message = {
      id: ports.ids.next(),
      personId: input.personId,
      text,
      senderId: input.senderId,
      sentAt: ports.clock.now()
    }
    await ports.messages.insert(message)
    await ports.events.published(message)
    return message
  }
}
