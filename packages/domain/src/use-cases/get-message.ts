import { messageNotFound } from '../errors.js'
import type { Message } from '../message/message.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'

export const getMessage = ({ messages }: Pick<Ports, 'messages'>) =>
  async (id: string): Promise<Message> => {
    const message = isId(id) ? await messages.findById(id) : undefined
    if (message === undefined) throw messageNotFound(id)
    return message
  }
