import { changeEvents, messageData, subjects, type Actor } from '../change/change-event.js'
import { personNotFound } from '../errors.js'
import { checkMessageText, type Message } from '../message/message.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'
import type { TransactionPorts } from '../shared/unit-of-work.js'

/** A message as a caller writes it; the sender is the caller. */
export interface SendMessageInput {
  personId: string
  text: string
}

/** Checks and stores a message with its event, announcing nothing: the part of a send that belongs in a transaction. */
export const storeMessage = (ports: Pick<Ports, 'clock' | 'ids'>) =>
  async (tx: Pick<TransactionPorts, 'messages' | 'changes'>, actor: Actor, input: SendMessageInput): Promise<Message> => {
    const text = checkMessageText(input.text)
    // A malformed id names nobody. For a well-formed one the insert is the
    // lookup: the repository refuses a recipient it does not hold with
    // PERSON_NOT_FOUND, so the person's row is not read first.
    if (!isId(input.personId)) throw personNotFound(input.personId)
    const message: Message = {
      id: ports.ids.next(),
      personId: input.personId,
      text,
      senderId: actor.id,
      sentAt: ports.clock.now()
    }
    await tx.messages.insert(message)
    tx.changes.record(changeEvents(ports, actor)('message.sent', subjects.message(message.id), messageData(message)))
    return message
  }

/** Stores a message, then tells subscribers: they never hear of one that is not stored. */
export const sendMessage = (ports: Pick<Ports, 'unitOfWork' | 'clock' | 'ids' | 'events'>) => {
  const store = storeMessage(ports)
  return async (actor: Actor, input: SendMessageInput): Promise<Message> => {
    const message = await ports.unitOfWork.run((tx) => store(tx, actor, input))
    await ports.events.published(message)
    return message
  }
}
