import { personNotFound, type Message, type MessageRepository } from '@people-service/domain'
import type { Kysely } from 'kysely'
import type { Database, MessageRow } from '../database.js'
import { isForeignKeyViolation, translateErrors } from '../database-errors.js'
import { toDate } from '../person/person.rows.js'

const toMessage = (row: MessageRow): Message => ({
  id: row.id,
  personId: row.person_id,
  text: row.text,
  senderId: row.sender_id,
  sentAt: toDate(row.sent_at)
})

export const kyselyMessageRepository = (db: Kysely<Database>): MessageRepository => translateErrors({
  async insert (message) {
    try {
      await db.insertInto('message').values({
        id: message.id,
        person_id: message.personId,
        text: message.text,
        sender_id: message.senderId,
        sent_at: message.sentAt.toISOString()
      }).execute()
    } catch (error) {
      // The recipient was deleted after the use case looked them up.
      if (isForeignKeyViolation(error)) throw personNotFound(message.personId)
      throw error
    }
  },

  async findById (id) {
    const row = await db.selectFrom('message').selectAll().where('id', '=', id).executeTakeFirst()
    return row && toMessage(row)
  },

  async listForPerson (personId, { limit, before }) {
    let query = db.selectFrom('message').selectAll().where('person_id', '=', personId)
    if (before) {
      const sentAt = before.sentAt.toISOString()
      query = query.where((eb) => eb.or([
        eb('sent_at', '<', sentAt),
        eb.and([eb('sent_at', '=', sentAt), eb('id', '<', before.id)])
      ]))
    }
    const rows = await query.orderBy('sent_at', 'desc').orderBy('id', 'desc').limit(limit).execute()
    return rows.map(toMessage)
  },

  async listForMany (personIds, limit) {
    const result = new Map<string, Message[]>(personIds.map((id) => [id, []]))
    if (personIds.length === 0 || limit === 0) return result
    const rows = await db
      .with('ranked', (q) => q.selectFrom('message')
        .selectAll()
        .select((eb) => eb.fn.agg<number>('row_number')
          .over((over) => over.partitionBy('person_id').orderBy('sent_at', 'desc').orderBy('id', 'desc')).as('rank'))
        .where('person_id', 'in', personIds))
      .selectFrom('ranked')
      .select(['id', 'person_id', 'text', 'sender_id', 'sent_at'])
      .where('rank', '<=', limit)
      .orderBy('person_id')
      .orderBy('sent_at', 'desc')
      .orderBy('id', 'desc')
      .execute()
    for (const row of rows) result.get(row.person_id)?.push(toMessage(row))
    return result
  }
})
