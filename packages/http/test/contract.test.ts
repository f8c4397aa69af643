import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { buildClientSchema, getIntrospectionQuery, isInputObjectType, isObjectType, parse, print, type GraphQLSchema, type IntrospectionQuery, type ObjectTypeDefinitionNode } from 'graphql'
import t from 'tap'
import { build } from './helper.js'

/*
 * docs/API.md is the contract; the service describes itself in the OpenAPI
 * document it serves and in its GraphQL schema. Every route and type of one
 * is in the other, in every clone (the contract is part of the repository).
 */

const CONTRACT = readFileSync(fileURLToPath(new URL('../../../docs/API.md', import.meta.url)), 'utf8')

/** The text from a `## ` heading to the next one. */
const section = (markdown: string, heading: string): string => {
  const start = markdown.indexOf(`\n## ${heading}`)
  if (start < 0) throw new Error(`docs/API.md has no section "${heading}"`)
  const end = markdown.indexOf('\n## ', start + 1)
  return markdown.slice(start, end < 0 ? undefined : end)
}

/**
 * Routes the contract describes and this service does not serve yet. Each
 * is checked to be absent: once served, the test asks for its removal here.
 */
const NOT_YET_SERVED = new Set<string>([
])

/** The same for the GraphQL schema: types, and fields as `Type.field`. */
const NOT_YET_IN_SCHEMA = new Set<string>()

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']

/** `/person/<id>` and `/person/{id}` alike: parameters by position, not by name. */
const shapeOf = (path: string): string => path.replace(/<[^>]+>|\{[^}]+\}/g, '{}')

/** Every `METHOD /path` the contract names, in prose or in its tables, outside the examples of errors. */
const contractRoutes = (): Set<string> => {
  const text = CONTRACT.replace(section(CONTRACT, 'Status codes and errors'), '')
  const routes = new Set<string>()
  const methods = METHODS.join('|')
  for (const [, listed, path] of text.matchAll(new RegExp(`\`((?:(?:${methods}), )*(?:${methods})) (/[^\`\\s?]*)`, 'g'))) {
    for (const method of listed!.split(', ')) routes.add(`${method} ${shapeOf(path!)}`)
  }
  for (const [, listed, path] of text.matchAll(new RegExp(`^\\| ((?:(?:${methods}), )*(?:${methods})) \\| \`(/[^\`]*)\``, 'gm'))) {
    for (const method of listed!.split(', ')) routes.add(`${method} ${shapeOf(path!)}`)
  }
  return routes
}

t.test('every route of docs/API.md is in the served OpenAPI document, and every documented operation in docs/API.md', async (t) => {
  const { app } = await build(t)
  const document = (await app.inject('/openapi.json')).json<{ paths: Record<string, Record<string, unknown>> }>()
  const served = new Set(Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.keys(operations).filter((method) => METHODS.includes(method.toUpperCase())).map((method) => `${method.toUpperCase()} ${shapeOf(path)}`)))
  const contract = contractRoutes()
  t.ok(contract.size >= 40, `the contract's routes were read (${contract.size})`)
  t.ok(contract.has('PATCH /person/{}') && contract.has('GET /') && contract.has('POST /graphql'), 'from the tables and from the prose')

  const missing = [...contract].filter((route) => !served.has(route) && !NOT_YET_SERVED.has(route))
  t.same(missing, [], 'every route of the contract is served and documented')
  const undocumented = [...served].filter((route) => !contract.has(route))
  t.same(undocumented, [], 'every served route is in the contract')
  const arrived = [...NOT_YET_SERVED].filter((route) => served.has(route))
  t.same(arrived, [], 'served now: remove from NOT_YET_SERVED')
  const stale = [...NOT_YET_SERVED].filter((route) => !contract.has(route))
  t.same(stale, [], 'NOT_YET_SERVED names routes of the contract only')
})

/** A type's fields as text: name, arguments with their defaults, and type. */
const fieldsOfContract = (type: ObjectTypeDefinitionNode): string[] => (type.fields ?? []).map((field) => {
  const args = (field.arguments ?? []).map((arg) => `${arg.name.value}: ${print(arg.type)}${arg.defaultValue === undefined ? '' : ` = ${print(arg.defaultValue)}`}`)
  return `${field.name.value}${args.length === 0 ? '' : `(${args.join(', ')})`}: ${print(field.type)}`
}).sort()

const fieldsServed = (schema: GraphQLSchema, name: string): string[] | undefined => {
  const type = schema.getType(name)
  if (!isObjectType(type)) return undefined
  return Object.values(type.getFields()).map((field) => {
    const args = field.args.map((arg) => {
      const fallback = arg.defaultValue === undefined ? '' : ` = ${JSON.stringify(arg.defaultValue)}`
      return `${arg.name}: ${String(arg.type)}${fallback}`
    })
    return `${field.name}${args.length === 0 ? '' : `(${args.join(', ')})`}: ${String(field.type)}`
  }).sort()
}

t.test('the GraphQL schema of docs/API.md is the one served: every type and field, argument and default', async (t) => {
  const { api } = await build(t)
  // The schema as any client sees it: by introspection over HTTP.
  const introspection = await api.inject({ method: 'POST', url: '/graphql', payload: { query: getIntrospectionQuery() } })
  t.equal(introspection.statusCode, 200)
  const schema = buildClientSchema(introspection.json<{ data: IntrospectionQuery }>().data)
  const sdl = /```graphql\n([^]*?)```/.exec(section(CONTRACT, 'Query endpoint'))?.[1]
  if (sdl === undefined) throw new Error('docs/API.md has no GraphQL schema block')
  const types = parse(sdl).definitions.filter((d): d is ObjectTypeDefinitionNode => d.kind === 'ObjectTypeDefinition')
  t.ok(types.length >= 10, `the contract's types were read (${types.length})`)
  for (const type of types) {
    const name = type.name.value
    if (NOT_YET_IN_SCHEMA.has(name)) {
      t.equal(schema.getType(name), undefined, `type ${name}: served now, remove it from NOT_YET_IN_SCHEMA`)
      continue
    }
    const pending = (field: string) => NOT_YET_IN_SCHEMA.has(`${name}.${field.replace(/[(:].*$/, '')}`)
    const served = fieldsServed(schema, name) ?? []
    t.same(served, fieldsOfContract(type).filter((field) => !pending(field)), `type ${name}`)
    t.same(served.filter(pending), [], `type ${name}: fields served now, remove them from NOT_YET_IN_SCHEMA`)
  }
  const named = new Set(types.map((type) => type.name.value))
  const extra = Object.values(schema.getTypeMap())
    .filter((type) => isObjectType(type) && !type.name.startsWith('__') && !named.has(type.name))
    .map((type) => type.name)
  t.same(extra, [], 'every object type served is in the contract')
  // The input types the contract's fields take exist (their fields are the REST bodies', OpenAPI's).
  for (const input of ['PersonInput', 'PersonPatch']) t.ok(isInputObjectType(schema.getType(input)), `input ${input} is served`)
})
