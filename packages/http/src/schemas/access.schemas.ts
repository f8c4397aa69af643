import { ACCOUNT_LIMITS, API_KEY_LIMITS, ROLES, SCOPES, type Role, type Scope } from '@people-service/domain'
import { Type } from '@sinclair/typebox'
import { Nullable, Timestamp } from './nullable.js'

// Enums rather than unions of literals: Ajv then says "must be equal to one
// of the allowed values" instead of reporting the first literal that failed.
const RoleSchema = Type.Unsafe<Role>({ type: 'string', enum: [...ROLES] })
const ScopeSchema = Type.Unsafe<Scope>({ type: 'string', enum: [...SCOPES] })

// Passwords are counted once NFKC-normalized (the domain's checkPassword),
// which can shorten or lengthen what was sent: the edge only bounds the input.
const PASSWORD_INPUT = { minLength: 1, maxLength: ACCOUNT_LIMITS.passwordMaxLength * 4 }
const NEW_PASSWORD = {
  ...PASSWORD_INPUT,
  description: `NFKC-normalized, then ${ACCOUNT_LIMITS.passwordMinLength} to ${ACCOUNT_LIMITS.passwordMaxLength} characters, not all white space`
}

export const LoginSchema = Type.Object({
  username: Type.String({ minLength: 1, maxLength: ACCOUNT_LIMITS.usernameLength }),
  password: Type.String({ minLength: 1, maxLength: ACCOUNT_LIMITS.passwordMaxLength })
}, { additionalProperties: false })

export const TokenSchema = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'seconds' })
})

export const NewAccountSchema = Type.Object({
  username: Type.String({
    minLength: 1,
    maxLength: ACCOUNT_LIMITS.usernameLength * 4,
    description: `NFKC-normalized, then 1 to ${ACCOUNT_LIMITS.usernameLength} letters, digits or . _ @ -; unique without regard to case`
  }),
  password: Type.String(NEW_PASSWORD),
  role: RoleSchema
}, { additionalProperties: false })

const accountFields = {
  id: Type.String(),
  username: Type.String(),
  role: RoleSchema,
  disabled: Type.Boolean(),
  createdAt: Timestamp
}

export const AccountSchema = Type.Object(accountFields)

export const CurrentCallerSchema = Type.Object({
  ...accountFields,
  scopes: Type.Array(ScopeSchema, { description: 'what this credential may do now' })
})

export const AccountChangesSchema = Type.Object({
  role: Type.Optional(RoleSchema),
  disabled: Type.Optional(Type.Boolean()),
  password: Type.Optional(Type.String(NEW_PASSWORD))
}, { additionalProperties: false })

export const AccountIdParams = Type.Object({ id: Type.String() })

export const AccountDeletedSchema = Type.Object({ id: Type.String(), deleted: Type.Literal(true) })

export const ChangePasswordSchema = Type.Object({
  currentPassword: Type.String(PASSWORD_INPUT),
  newPassword: Type.String(NEW_PASSWORD)
}, { additionalProperties: false })

export const PasswordChangedSchema = Type.Object({ changed: Type.Literal(true) })

export const NewApiKeySchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: API_KEY_LIMITS.nameLength }),
  scopes: Type.Optional(Type.Array(ScopeSchema, { maxItems: SCOPES.length * 2, description: 'default: every scope of the creator' })),
  rateLimit: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: API_KEY_LIMITS.maxRateLimit, description: 'requests per window; null: the service default' })))
}, { additionalProperties: false })

const apiKeyFields = {
  id: Type.String(),
  name: Type.String(),
  scopes: Type.Array(ScopeSchema),
  rateLimit: Nullable(Type.Integer()),
  createdAt: Timestamp
}

export const ApiKeySchema = Type.Object(apiKeyFields)

export const CreatedApiKeySchema = Type.Object({
  ...apiKeyFields,
  key: Type.String({ description: 'the key itself: shown once, never again' })
})

export const ApiKeyIdParams = Type.Object({ id: Type.String() })

export const ApiKeyUsageSchema = Type.Object({
  id: Type.String(),
  total: Type.Integer(),
  byDay: Type.Array(Type.Object({ day: Type.String({ description: 'YYYY-MM-DD, UTC' }), requests: Type.Integer() }))
})
