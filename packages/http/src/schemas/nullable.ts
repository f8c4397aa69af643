import { Type, type Static, type TSchema } from '@sinclair/typebox'

/**
 * `T | null` as a JSON Schema type list rather than anyOf: Ajv reports one
 * clear error for it and fast-json-stringify serialises it without trying
 * each branch.
 */
export const Nullable = <T extends TSchema & { type: string }>(schema: T) =>
  Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] })

/** An ISO-8601 instant on the wire; the serialiser writes `Date` values as such. */
export const Timestamp = Type.Unsafe<Date>({ type: 'string', format: 'date-time' })
