import { validationError } from '../errors.js'
import { characterCount, checkLinesText } from '../shared/text.js'

export interface Message {
  id: string
  /** The person the message was sent to. */
  personId: string
  text: string
  /** The calling account or API key that sent it. */
  senderId: string
  sentAt: Date
}

export const MESSAGE_LIMITS = { textLength: 10_000 } as const

export const checkMessageText = (text: unknown): string => {
  if (typeof text !== 'string') throw validationError('text', 'is required and must be a string')
  checkLinesText('text', text)
  const length = characterCount(text)
  if (length < 1 || length > MESSAGE_LIMITS.textLength) {
    throw validationError('text', `must be 1 to ${MESSAGE_LIMITS.textLength} characters`)
  }
  return text
}
