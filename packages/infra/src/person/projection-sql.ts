import type { AddressEntry, PersonEntry, PersonSelection } from '@people-service/domain'
import type { Dialect } from '../database.js'
import { personSummaries } from '../sql-dialect.js'

/*
 * A selection of a person as one SQL expression that builds its JSON, for
 * SQLite (json_object, json_group_array) and PostgreSQL (json_build_object,
 * json_agg). Every friend list is a correlated subquery: the owner's first
 * `limit` friendship rows by friend_pk (a range of the primary key, which
 * stops at `limit`), joined to the friends by pk, and aggregated in that
 * order. However deep the selection, the statement is one.
 */

interface JsonFunctions {
  object: string
  /** The JSON array of `element` over the rows of `from`, in the order of `orderBy`; [] when there are none. */
  array(element: string, from: string, orderBy: string): string
  emptyArray: string
  placeholder(index: number): string
}

const DIALECTS: Record<Dialect, JsonFunctions> = {
  sqlite: {
    object: 'json_object',
    // An aggregate over no rows still gives one row: '[]'. The rows come in
    // the order of `from`: its friendship range, a co-routine in friend_pk
    // order, is the outer loop of the join (the friend is found by pk for
    // each), so an ORDER BY in the aggregate would only add a sort per owner.
    // JSONB, a blob the enclosing json_object embeds as JSON: since SQLite
    // 3.54 a scalar subquery's value loses the JSON subtype of
    // json_group_array's text, which json_object would then quote as a string.
    array: (element, from) => `(select jsonb_group_array(${element}) from ${from})`,
    emptyArray: 'json_array()',
    placeholder: () => '?'
  },
  postgres: {
    object: 'json_build_object',
    array: (element, from, orderBy) => `coalesce((select json_agg(${element} order by ${orderBy}) from ${from}), '[]'::json)`,
    emptyArray: '\'[]\'::json',
    placeholder: (index) => `$${index}`
  }
}

/** A string as an SQL literal; keys are GraphQL names and constants type names, but quoting costs nothing. */
const literal = (value: string): string => `'${value.replaceAll("'", "''")}'`

const PERSON_COLUMNS = { id: 'id', name: 'name', age: 'age', email: 'email' } as const
const ADDRESS_COLUMNS = { street: 'street', city: 'city', country: 'country' } as const

/** Whether a friend's key, id and name are all `selection` reads (its own friends go by its key). */
const summaryOnly = (selection: PersonSelection): boolean => selection.every((entry) =>
  entry.kind === 'constant' || entry.kind === 'friends' || (entry.kind === 'field' && (entry.field === 'id' || entry.field === 'name')))

class ProjectionCompiler {
  readonly #dialect: Dialect
  readonly #json: JsonFunctions
  #aliases = 0

  constructor (dialect: Dialect) {
    this.#dialect = dialect
    this.#json = DIALECTS[dialect]
  }

  /** A fresh table alias: every nested subquery gets its own. */
  alias (prefix: string): string {
    return `${prefix}${this.#aliases++}`
  }

  person (table: string, selection: PersonSelection): string {
    return `${this.#json.object}(${selection.map((entry) => `${literal(entry.key)}, ${this.#entry(table, entry)}`).join(', ')})`
  }

  #entry (table: string, entry: PersonEntry): string {
    switch (entry.kind) {
      case 'field': return `${table}.${PERSON_COLUMNS[entry.field]}`
      case 'constant': return literal(entry.value)
      case 'address': return `case when ${table}.has_address <> 0 then ${this.#address(table, entry.selection)} end`
      case 'friends': return this.#friends(table, entry.limit, entry.selection)
    }
  }

  #address (table: string, selection: readonly AddressEntry[]): string {
    const pairs = selection.map((entry) =>
      `${literal(entry.key)}, ${entry.kind === 'constant' ? literal(entry.value) : `${table}.${ADDRESS_COLUMNS[entry.field]}`}`)
    return `${this.#json.object}(${pairs.join(', ')})`
  }

  #friends (owner: string, limit: number, selection: PersonSelection): string {
    if (limit === 0) return this.#json.emptyArray
    const link = this.alias('fr')
    const friend = this.alias('f')
    const people = summaryOnly(selection) ? personSummaries(this.#dialect, friend) : `person ${friend}`
    const from = `(select friend_pk from friendship where person_pk = ${owner}.pk order by friend_pk limit ${limit}) ${link} ` +
      `join ${people} on ${friend}.pk = ${link}.friend_pk`
    return this.#json.array(this.person(friend, selection), from, `${link}.friend_pk`)
  }
}

/** One person by public id: one row, one column `json`; the id is the one parameter. */
export const personByIdSql = (dialect: Dialect, selection: PersonSelection): string => {
  const compiler = new ProjectionCompiler(dialect)
  const person = compiler.alias('p')
  return `select ${compiler.person(person, selection)} as json from person ${person} where ${person}.id = ${DIALECTS[dialect].placeholder(1)}`
}

/**
 * A page of people by public id: a row each, in order, column `json`.
 * Parameters: the limit, or the id to start after and the limit.
 */
export const peoplePageSql = (dialect: Dialect, selection: PersonSelection, after: boolean): string => {
  const compiler = new ProjectionCompiler(dialect)
  const person = compiler.alias('p')
  const { placeholder } = DIALECTS[dialect]
  const where = after ? ` where ${person}.id > ${placeholder(1)}` : ''
  return `select ${compiler.person(person, selection)} as json from person ${person}${where} order by ${person}.id limit ${placeholder(after ? 2 : 1)}`
}
