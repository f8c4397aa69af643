import { MESSAGE_LIMITS } from '@people-service/domain'
import { Type } from '@sinclair/typebox'
import { Timestamp } from './nullable.js'

export const SendMessageSchema = Type.Object({
  personId: Type.String({ description: 'the person the message is sent to' }),
  text: Type.String({ minLength: 1, maxLength: MESSAGE_LIMITS.textLength })
}, { additionalProperties: false, $id: 'SendMessage' })

export const MessageSchema = Type.Object({
  id: Type.String(),
  personId: Type.String(),
  text: Type.String(),
  senderId: Type.String({ description: 'the account or API key that sent it' }),
  sentAt: Timestamp
}, { $id: 'Message' })
