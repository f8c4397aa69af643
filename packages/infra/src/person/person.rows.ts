import { foldName, type Person } from '@people-service/domain'
import type { NewPersonRow, PersonRow } from '../database.js'

export const toDate = (value: string | Date): Date => (value instanceof Date ? value : new Date(value))

export const toPerson = (row: PersonRow): Person => ({
  id: row.id,
  name: row.name,
  age: row.age,
  email: row.email,
  address: row.has_address ? { street: row.street, city: row.city, country: row.country } : null,
  createdAt: toDate(row.created_at),
  updatedAt: toDate(row.updated_at),
  version: row.version
})

// Timestamps are written as ISO text: SQLite stores it as is, PostgreSQL parses it.
export const toPersonRow = (person: Person): NewPersonRow => ({
  id: person.id,
  name: person.name,
  name_lower: foldName(person.name),
  age: person.age,
  email: person.email,
  has_address: person.address ? 1 : 0,
  street: person.address?.street ?? null,
  city: person.address?.city ?? null,
  country: person.address?.country ?? null,
  created_at: person.createdAt.toISOString(),
  updated_at: person.updatedAt.toISOString(),
  version: person.version
})
