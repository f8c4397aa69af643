import { DomainError, personNotFound, preconditionFailed, validationError } from '../errors.js'
import { characterCount, checkDisplayName, checkStorableText } from '../shared/text.js'

export interface Address {
  street: string | null
  city: string | null
  country: string | null
}

export interface Person {
  id: string
  name: string
  age: number | null
  email: string | null
  address: Address | null
  createdAt: Date
  updatedAt: Date
  /**
   * 1 when created, one more on every change: what a client's `If-Match`
   * names, and what a write checks it still holds (optimistic concurrency).
   */
  version: number
}

/** The list entry of `GET /people` and of friend lists. */
export interface PersonSummary {
  id: string
  name: string
}

/** What a caller supplies to create a person; optional fields default to null. */
export interface PersonInput {
  name: string
  age?: number | null
  email?: string | null
  address?: Partial<Address> | null
}

/**
 * A change to a person: a field left out keeps its value, `null` clears it.
 * `address` merges the same way, field by field (JSON Merge Patch, RFC 7396).
 */
export interface PersonPatch {
  name?: string
  age?: number | null
  email?: string | null
  address?: Partial<Address> | null
}

export const PERSON_LIMITS = {
  nameLength: 200,
  maxAge: 150,
  emailLength: 254,
  addressFieldLength: 200
} as const

// Deliberately modest: one "@", no spaces, a dot in the domain. Deliverability
// is the mail system's business; this only rejects what cannot be an address.
const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/

/**
 * The one rule for the shape of an e-mail address (its length is checked
 * apart): every adapter that validates input early must use this, so an
 * address accepted through one API is accepted through all of them —
 * internationalised addresses (`zoë@bücher.de`) included.
 */
export const isEmailAddress = (value: string): boolean => EMAIL.test(value)

/**
 * The form in which a name search compares names and needles: NFC (names
 * are stored so, and a needle typed decomposed finds them), lower case,
 * with the final sigma as any other. toLowerCase writes a Σ that ends a word
 * as ς, so a needle of the first letters of a word (`ΟΔΥΣ` → `οδυς`) missed
 * the name holding it (`ΟΔΥΣΣΕΥΣ` → `οδυσσευς`); with ς read as σ the
 * mapping is the same for a character wherever it stands, so a substring of
 * the name is a substring of its folded form.
 */
export const foldName = (text: string): string => text.normalize('NFC').toLowerCase().replaceAll('ς', 'σ')

/** The name as stored: NFC (checkDisplayName), counted after normalizing. */
const checkName = (name: unknown): string => {
  if (typeof name !== 'string') throw validationError('name', 'is required and must be a string')
  // The length first: an empty name is told the range, not that it shows nothing.
  const outOfRange = (text: string) => text.length === 0 || characterCount(text) > PERSON_LIMITS.nameLength
  if (outOfRange(name)) throw validationError('name', `must be 1 to ${PERSON_LIMITS.nameLength} characters`)
  const normalized = checkDisplayName('name', name)
  if (outOfRange(normalized)) throw validationError('name', `must be 1 to ${PERSON_LIMITS.nameLength} characters`)
  return normalized
}

const checkAge = (age: unknown): number | null => {
  if (age === null || age === undefined) return null
  if (typeof age !== 'number' || !Number.isInteger(age) || age < 0 || age > PERSON_LIMITS.maxAge) {
    throw validationError('age', `must be an integer from 0 to ${PERSON_LIMITS.maxAge} or null`)
  }
  return age
}

const checkEmail = (email: unknown): string | null => {
  if (email === null || email === undefined) return null
  if (typeof email !== 'string' || characterCount(email) > PERSON_LIMITS.emailLength || !isEmailAddress(email)) {
    throw validationError('email', `must be an e-mail address of at most ${PERSON_LIMITS.emailLength} characters or null`)
  }
  return checkStorableText('email', email)
}

const checkAddressField = (field: keyof Address, value: unknown): string | null => {
  if (value === null || value === undefined) return null
  if (typeof value !== 'string' || characterCount(value) > PERSON_LIMITS.addressFieldLength) {
    throw validationError(`address.${field}`, `must be a string of at most ${PERSON_LIMITS.addressFieldLength} characters or null`)
  }
  return checkStorableText(`address.${field}`, value)
}

const checkAddress = (address: unknown): Address | null => {
  if (address === null || address === undefined) return null
  if (typeof address !== 'object' || Array.isArray(address)) {
    throw validationError('address', 'must be an object with street, city and country, or null')
  }
  const a = address as Partial<Address>
  return {
    street: checkAddressField('street', a.street),
    city: checkAddressField('city', a.city),
    country: checkAddressField('country', a.country)
  }
}

export type PersonFields = Pick<Person, 'name' | 'age' | 'email' | 'address'>

/** Validates every invariant of a person's own fields; throws VALIDATION_FAILED. */
export const checkPersonFields = (input: PersonInput): PersonFields => ({
  name: checkName(input.name),
  age: checkAge(input.age),
  email: checkEmail(input.email),
  address: checkAddress(input.address)
})

const mergeAddress = (current: Address | null, patch: Partial<Address> | null | undefined): Partial<Address> | null => {
  if (patch === undefined) return current
  if (patch === null) return null
  return { ...current, ...patch }
}

/**
 * Checks the fields a patch carries on their own, before anyone is looked up:
 * an invalid patch is refused whoever it names, as REST's body schema refuses
 * it before the route runs, so both APIs give the same answer.
 */
export const checkPersonPatch = (patch: PersonPatch): void => {
  if ('name' in patch && patch.name === null) throw validationError('name', 'cannot be cleared')
  if (patch.name !== undefined) checkName(patch.name)
  checkAge(patch.age)
  checkEmail(patch.email)
  checkAddress(patch.address)
}

/** Applies a checked patch (checkPersonPatch) to a person's fields and checks the result. */
export const applyPersonPatch = (person: Person, patch: PersonPatch): PersonFields => {
  return checkPersonFields({
    name: patch.name ?? person.name,
    age: patch.age === undefined ? person.age : patch.age,
    email: patch.email === undefined ? person.email : patch.email,
    address: mergeAddress(person.address, patch.address)
  })
}

/**
 * What a conditional write asks of the stored person (REST's `If-Match`):
 * to be at one of `versions`. Absent, a write applies to whatever is there.
 */
export interface VersionCondition {
  versions: readonly number[]
  /** `If-Match: *`: any version, but the person must exist (RFC 9110 §13.1.1). */
  anyVersion?: true
}

/** PRECONDITION_FAILED when `person` is not at a version the condition names. */
export const checkVersion = (person: Person, condition: VersionCondition | undefined): void => {
  if (condition !== undefined && condition.anyVersion !== true && !condition.versions.includes(person.version)) throw preconditionFailed(person.id)
}

/** What a write finds when there is no such person: 412 when the condition wanted one to exist, else 404. */
export const missingPerson = (id: string, condition: VersionCondition | undefined): DomainError =>
  condition?.anyVersion === true
    ? new DomainError('PRECONDITION_FAILED', `no person with id ${JSON.stringify(id.slice(0, 64))}: If-Match: * holds only for a person that exists`)
    : personNotFound(id)

/**
 * How often a write re-reads and tries again when another write changed the
 * person between its read and its write. Each round one of the racing
 * writers wins, so only a crowd of them on one person runs out of rounds.
 */
export const WRITE_ATTEMPTS = 10

export const editConflict = (id: string): DomainError =>
  new DomainError('EDIT_CONFLICT', `the person ${JSON.stringify(id)} changed under every attempt to write it; try again`)
