import { isEmailAddress } from '@people-service/domain'
import { Ajv, type ErrorObject, type Options } from 'ajv'
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
  const compiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
    (httpPart === 'body' ? strict : coercing).compile(schema as object)
  app.setValidatorCompiler(compiler)
  app.setSchemaErrorFormatter((errors, dataVar) => new Error(describeValidationError(errors as ErrorObject[], dataVar)))
}
