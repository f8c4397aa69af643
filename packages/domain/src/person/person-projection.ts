import type { ListPeopleQuery } from './person.repository.js'

/*
 * A projection is a person shaped as a client asked, already as JSON text:
 * the fields it names, under the keys it names, in its order, friends nested
 * to any depth. A database can build that text itself in one statement (as
 * the generated-SQL GraphQL engines do), so a reader whose answer goes
 * straight out as JSON skips mapping rows to objects and back.
 */

/** A person's own scalar fields. */
export type PersonScalar = 'id' | 'name' | 'age' | 'email'

/** An address's fields. */
export type AddressScalar = 'street' | 'city' | 'country'

/** One entry of an address's selection: a field, or a constant (a type's name). */
export type AddressEntry =
  | { readonly kind: 'field', readonly key: string, readonly field: AddressScalar }
  | { readonly kind: 'constant', readonly key: string, readonly value: string }

/** One entry of a person's selection, under the JSON key `key`. */
export type PersonEntry =
  | { readonly kind: 'field', readonly key: string, readonly field: PersonScalar }
  | { readonly kind: 'constant', readonly key: string, readonly value: string }
  /** The address object, or null when the person has none. */
  | { readonly kind: 'address', readonly key: string, readonly selection: readonly AddressEntry[] }
  /** The first `limit` friends in the order friend lists have, each shaped by `selection`. */
  | { readonly kind: 'friends', readonly key: string, readonly limit: number, readonly selection: PersonSelection }

/**
 * What to build of a person: entries in output order, keys unique. Adapters
 * may keep what they derive from a selection (its SQL) by its identity, so a
 * caller reuses one selection object for one shape.
 */
export type PersonSelection = readonly PersonEntry[]

/** A page of people by id, as ListPeopleQuery without a name filter. */
export type PeoplePageQuery = Pick<ListPeopleQuery, 'limit' | 'afterId'>

/**
 * Port: people as JSON text shaped by a selection. A lookup that finds
 * nobody returns `undefined`.
 */
export interface PersonProjections {
  /** The person with this id. */
  findJson(id: string, selection: PersonSelection): Promise<string | undefined>
  /** People ordered by id, at most `limit` of them, as a JSON array. */
  listJson(query: PeoplePageQuery, selection: PersonSelection): Promise<string>
}
