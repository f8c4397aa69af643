import type { Message } from './message.js'

export interface InboxQuery {
  limit: number
  /** Only messages older than this one, by (sentAt, id) descending. */
  before?: { sentAt: Date, id: string }
}

/** Port: where messages are kept. */
export interface MessageRepository {
  /** Throws PERSON_NOT_FOUND when the recipient does not exist. */
  insert(message: Message): Promise<void>
  findById(id: string): Promise<Message | undefined>
  /** Messages to one person, newest first. */
  listForPerson(personId: string, query: InboxQuery): Promise<Message[]>
  /** Newest messages of many people in one round trip, at most `limit` each. */
  listForMany(personIds: readonly string[], limit: number): Promise<Map<string, Message[]>>
}
