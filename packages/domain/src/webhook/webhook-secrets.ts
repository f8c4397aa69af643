import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

/**
 * Port: seals webhook signing secrets for storage and opens them to sign.
 * The webhook's id is bound to its sealed secret, so a sealed secret copied
 * to another row does not open.
 */
export interface WebhookSecretBox {
  seal(webhookId: string, secret: string): string
  /** Throws when the sealed text was not sealed under this box's key for this webhook. */
  open(webhookId: string, sealed: string): string
}

/** A new signing secret in the Standard Webhooks form: `whsec_` then base64 of 32 random bytes. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`

/** The HMAC key bytes a `whsec_` secret stands for. */
export const webhookSigningKey = (secret: string): Uint8Array => Buffer.from(secret.slice('whsec_'.length), 'base64')

/**
 * The 256-bit key that seals webhook secrets, derived (HKDF-SHA256) from
 * WEBHOOK_SECRET_KEY when set, else from JWT_SECRET: each a secret of the
 * deployment, given its own purpose by the `info` label.
 */
export const webhookSealingKey = (material: string): Uint8Array =>
  new Uint8Array(hkdfSync('sha256', material, 'people-service', 'webhook secret sealing v1', 32))

const VERSION = 'v1'
const IV_BYTES = 12
const TAG_BYTES = 16

/** AES-256-GCM: `v1.<base64 of iv | ciphertext | tag>`, the webhook id as associated data. */
export const aesGcmWebhookSecretBox = (key: Uint8Array): WebhookSecretBox => {
  if (key.length !== 32) throw new Error('the webhook sealing key must be 32 bytes')
  return {
    seal (webhookId, secret) {
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv('aes-256-gcm', key, iv)
      cipher.setAAD(Buffer.from(webhookId))
      const sealed = Buffer.concat([iv, cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()])
      return `${VERSION}.${sealed.toString('base64')}`
    },
    open (webhookId, sealed) {
      const [version, body = ''] = sealed.split('.', 2)
      const bytes = Buffer.from(body, 'base64')
      if (version !== VERSION || bytes.length < IV_BYTES + TAG_BYTES) throw new Error('not a sealed webhook secret')
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES))
      decipher.setAAD(Buffer.from(webhookId))
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES))
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8')
    }
  }
}
