import type { Person, VersionCondition } from '@people-service/domain'

/*
 * Entity tags of people (RFC 9110 §8.8.3): strong, made from the version the
 * row carries, so answering with one costs no query and no hash of the body.
 */

/** The strong ETag of a person as stored now. */
export const etagOf = (person: Pick<Person, 'version'>): string => `"${person.version}"`

// An entity-tag: optionally W/, then an opaque string in double quotes.
const ENTITY_TAG = /(W\/)?"([^"]*)"/g

/**
 * If-None-Match holds the current tag (a person's, a page file's; weak
 * comparison, as the RFC has it for this header), or `*`: the client's copy
 * is current, 304.
 */
export const clientHasCurrent = (ifNoneMatch: string, etag: string): boolean => {
  if (ifNoneMatch.trim() === '*') return true
  for (const [, , opaque] of ifNoneMatch.matchAll(ENTITY_TAG)) if (`"${opaque}"` === etag) return true
  return false
}

/**
 * The versions an If-Match header accepts (strong comparison: weak tags
 * match nothing); an absent header accepts any, `*` any of a person that
 * exists. Tags this service did not make name no version, so a header of
 * only those can never hold: 412.
 */
export const versionConditionOf = (ifMatch: string | undefined): VersionCondition | undefined => {
  if (ifMatch === undefined) return undefined
  if (ifMatch.trim() === '*') return { versions: [], anyVersion: true }
  const versions: number[] = []
  for (const [, weak, opaque] of ifMatch.matchAll(ENTITY_TAG)) {
    if (weak === undefined && opaque !== undefined && /^[1-9]\d{0,15}$/.test(opaque)) versions.push(Number(opaque))
  }
  return { versions }
}
