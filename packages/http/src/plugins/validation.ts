import { isEmailAddress } from '@people-service/domain'
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify'

/*
 * Fastify's default Ajv strips unknown properties and coerces "123" into 123
 * everywhere. A body is what the client meant to send, so bodies are checked
 * as they are: unknown fields and wrong types are errors. Querystrings and
 * path parameters are text by nature and are coerced.
 */
const options: Options = { allErrors: false, useDefaults: true, strict: false, removeAdditional: false }

const makeAjv = (coerceTypes: boolean): Ajv => {
  const ajv = new Ajv({ ...options, coerceTypes })
  addFormats.default(ajv, ['date-time'])
  // The domain's rule, not ajv-formats' stricter ASCII one: REST must accept
  // every address GraphQL and the use cases accept, and no other.
  ajv.addFormat('email', { type: 'string', validate: isEmailAddress })
  return ajv
}

/*
 * Ajv coerces text to an integer wherever JavaScript's `==` finds them
 * equal, so `?limit=0x10`, `1e2`, ` 10` and `10.0` were read as numbers.
 * A whole number in a query or a path is written in decimal digits, as
 * the contract shows it; anything else is refused as not an integer,
 * before Ajv coerces it.
 */
const DECIMAL = /^-?\d+$/

/** The top-level fields of a query or path schema that are integers. */
const integerFields = (schema: object): string[] => {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {}
  return Object.keys(properties).filter((name) => properties[name]?.type === 'integer')
}

type Validator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null }

const decimalIntegers = (validate: ValidateFunction, fields: string[]): Validator => {
  const check: Validator = (data) => {
    const values = data as Record<string, unknown> | null
    for (const name of fields) {
      const value = values?.[name]
      if (typeof value === 'string' && !DECIMAL.test(value)) {
        check.errors = [{ keyword: 'type', instancePath: `/${name}`, schemaPath: `#/properties/${name}/type`, params: { type: 'integer' }, message: 'must be integer' }]
        return false
      }
    }
    const valid = validate(data)
    check.errors = validate.errors
    return valid
  }
  return check
}

const pointerToPath = (pointer: string): string =>
  pointer.split('/').slice(1).map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~')).join('.')

/** One sentence naming the field at fault: "body.address.city must NOT have more than 200 characters". */
export const describeValidationError = (errors: ErrorObject[], dataVar: string): string => {
  const error = errors.find((e) => e.keyword !== 'if') ?? errors[0]
  if (error === undefined) return `${dataVar} is invalid`
  const at = [dataVar, pointerToPath(error.instancePath)].filter(Boolean).join('.')
  switch (error.keyword) {
    case 'additionalProperties':
      return `${at} has an unknown field '${String(error.params.additionalProperty)}'`
    case 'required':
      return `${at} is missing the required field '${String(error.params.missingProperty)}'`
    default:
      return `${at} ${error.message ?? 'is invalid'}`
  }
}

export const installValidation = (app: FastifyInstance): void => {
  const strict = makeAjv(false)
  const coercing = makeAjv(true)
  const compiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
    if (httpPart === 'body') return strict.compile(schema as object)
    const validate = coercing.compile(schema as object)
    const integers = integerFields(schema as object)
    return integers.length === 0 ? validate : decimalIntegers(validate, integers)
  }
  app.setValidatorCompiler(compiler)
  app.setSchemaErrorFormatter((errors, dataVar) => new Error(describeValidationError(errors as ErrorObject[], dataVar)))
}
