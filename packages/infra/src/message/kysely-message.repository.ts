import { personNotFound, type Message, type MessageRepository } from '@people-service/domain'
import type { Kysely } from 'kysely'
import type { Database } from '../database.js'
import { isForeignKeyViolation, isNotNullViolation, translateErrors } from '../database-errors.js'
import { toDate } from '../person/person.rows.js'

/** A message as read: the recipient by public id. */
interface MessageRecord {
  id: string
  person_id: string
  text: string
  sender_id: string
  sent_at: string | Date
}

const toMessage = (row: MessageRecord): Message => ({
  id: row.id,
  personId: row.person_id,
  text: row.text,
  senderId: row.sender_id,
  sentAt: toDate(row.sent_at)
})

export const kyselyMessageRepository = (db: Kysely<Database>): MessageRepository => {
  const pkOf = (id: string) => db.selectFrom('person').select('person.pk').where('person.id', '=', id)

  return translateErrors({
    async insert (message) {
      try {
        await db.insertInto('message').values({
          id: message.id,
          person_pk: pkOf(message.personId),
          text: message.text,
          sender_id: message.senderId,
          sent_at: message.sentAt.toISOString()
        }).execute()
      } catch (error) {
        // No such recipient (a null key), or deleted after the use case looked them up.
        if (isNotNullViolation(error) || isForeignKeyViolation(error)) throw personNotFound(message.personId)
        throw error
      }
    },

    async findById (id) {
      const row = await db.selectFrom('message')
        .innerJoin('person', 'person.pk', 'message.person_pk')
        .select(['message.id', 'person.id as person_id', 'message.text', 'message.sender_id', 'message.sent_at'])
        .where('message.id', '=', id).executeTakeFirst()
      return row && toMessage(row)
    },

    async listForPerson (personId, { limit, before }) {
      let query = db.selectFrom('message')
        .select(['id', 'text', 'sender_id', 'sent_at'])
        .where('person_pk', '=', pkOf(personId))
      if (before) {
        const sentAt = before.sentAt.toISOString()
        query = query.where((eb) => eb.or([
          eb('sent_at', '<', sentAt),
          eb.and([eb('sent_at', '=', sentAt), eb('id', '<', before.id)])
        ]))
      }
      const rows = await query.orderBy('sent_at', 'desc').orderBy('id', 'desc').limit(limit).execute()
      return rows.map((row) => toMessage({ ...row, person_id: personId }))
    },

    async listForMany (personIds, limit) {
      const result = new Map<string, Message[]>(personIds.map((id) => [id, []]))
      if (personIds.length === 0 || limit === 0) return result
      const rows = await db
        .with('ranked', (q) => q.selectFrom('message')
          .innerJoin('person', 'person.pk', 'message.person_pk')
          .select(['message.id', 'person.id as person_id', 'message.text', 'message.sender_id', 'message.sent_at'])
          .select((eb) => eb.fn.agg<number>('row_number')
            .over((over) => over.partitionBy('message.person_pk').orderBy('message.sent_at', 'desc').orderBy('message.id', 'desc')).as('rank'))
          .where('person.id', 'in', personIds))
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
}
