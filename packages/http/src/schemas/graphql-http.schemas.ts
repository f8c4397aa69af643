import { Type } from '@sinclair/typebox'

/** GraphQL over HTTP as the OpenAPI document shows /graphql; the GraphQL routes read the requests themselves (graphql/http-route.ts). */

const GraphQLErrorSchema = Type.Object({
  message: Type.String(),
  locations: Type.Optional(Type.Array(Type.Object({ line: Type.Integer(), column: Type.Integer() }))),
  path: Type.Optional(Type.Array(Type.Union([Type.String(), Type.Integer()]))),
  extensions: Type.Optional(Type.Object({
    code: Type.Optional(Type.String({ description: 'a stable machine-readable name, as in REST errors' }))
  }, { additionalProperties: true }))
})

export const GraphQLResponseSchema = Type.Object({
  data: Type.Optional(Type.Unsafe<Record<string, unknown> | null>({ type: ['object', 'null'], additionalProperties: true, description: 'the result, shaped as the query asked' })),
  errors: Type.Optional(Type.Array(GraphQLErrorSchema, { description: 'what failed, when something did' })),
  extensions: Type.Optional(Type.Object({
    cost: Type.Optional(Type.Object({
      requested: Type.Integer({ description: 'the worst-case cost of the operation' }),
      charged: Type.Integer({ description: 'requests counted against the caller\'s budget' })
    }))
  }, { additionalProperties: true }))
}, { $id: 'GraphQLResponse', description: 'GraphQL over HTTP: `data`, with `errors` beside it when something failed' })

const query = Type.String({ minLength: 1, description: 'the GraphQL document', examples: ['{ people(limit: 2) { id name } }'] })
const operationName = Type.String({ description: 'which operation of the document to run' })

export const GraphQLQueryString = Type.Object({
  query,
  variables: Type.Optional(Type.String({ description: 'the variables, as a JSON object' })),
  operationName: Type.Optional(operationName)
})

export const GraphQLBodySchema = Type.Object({
  query,
  variables: Type.Optional(Type.Unsafe<Record<string, unknown> | null>({ type: ['object', 'null'], additionalProperties: true })),
  operationName: Type.Optional(Type.Unsafe<string | null>({ type: ['string', 'null'] })),
  extensions: Type.Optional(Type.Unsafe<Record<string, unknown> | null>({ type: ['object', 'null'], additionalProperties: true }))
})

export const GRAPHQL_EXAMPLES = {
  data: {
    data: { people: [{ id: '0192f6c4-5b7e-7cc3-a1f0-4c1d2e3f4a5b', name: 'Ada Lovelace' }] },
    extensions: { cost: { requested: 2, charged: 1 } }
  },
  /** A request error: refused before anything ran, so no `data`. */
  error: (code: string, message: string) => ({ errors: [{ message, extensions: { code } }] })
} as const
