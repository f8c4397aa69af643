import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database } from '../database.js'
import { chunks, holdingLast, PERSON_COLUMNS, type SeedPlan } from './seed-plan.js'

/*
 * The PostgreSQL seed: people in batches bound as one array per column
 * (`unnest`), one statement and thirteen parameters per 10,000 rows, and
 * friendships and messages computed by the server from the pattern
 * (`generate_series`). Meanwhile each table's secondary indexes (the trigram
 * index of names, the inbox) and keys are set aside, and built or checked
 * once at the end, in one pass each; each table loads in one
 * transaction, which an interruption rolls back whole. 1M people × 20
 * friends × 3 messages: 66 s on the 2-core machine, the server busy all along.
 *
 * COPY (pg-copy-streams) was measured against the arrays for the people:
 * 1M rows in 13.2 s by `unnest`, generation included; generated as CSV in
 * 5.4 s and copied by psql in 4.4 s. At most 6 s of the 66, for a new
 * dependency and a client taken out of Kysely's pool: not worth it.
 */

type Db = Kysely<Database>

const PEOPLE_PER_BATCH = 10_000
const PEOPLE_PER_STATEMENT = 20_000

interface Definition { name: string, definition: string }

/**
 * Drops the table's secondary indexes (not those behind its keys) for a
 * load; the function returned creates them again from their definitions,
 * each in one pass over the table (a sort, where row by row every insert
 * descends the tree; the trigram GIN index of names most of all).
 */
const setAsideIndexes = async (db: Db, table: keyof Database): Promise<() => Promise<void>> => {
  const { rows } = await sql<Definition>`select indexname as name, indexdef as definition from pg_indexes
    where schemaname = current_schema() and tablename = ${table}
      and indexname not in (select conname from pg_constraint where conrelid = ${table}::regclass)`.execute(db)
  for (const { name } of rows) await sql`drop index ${sql.ref(name)}`.execute(db)
  return async () => {
    for (const { definition } of rows) await sql.raw(definition).execute(db)
  }
}

/**
 * Drops the table's foreign keys, and its primary key unless another table's
 * foreign key needs it, for a load; the function returned adds them again:
 * the key's index built in one sort, every reference checked in one join
 * rather than one lookup per row (measured at 200,000 people × 20 friends:
 * the friendship load in half the time).
 */
const setAsideKeys = async (db: Db, table: keyof Database): Promise<() => Promise<void>> => {
  const { rows } = await sql<Definition>`select conname as name, pg_get_constraintdef(oid) as definition from pg_constraint c
    where conrelid = ${table}::regclass
      and (contype = 'f' or (contype = 'p' and not exists (select 1 from pg_constraint r where r.confrelid = c.conrelid)))
    order by contype = 'f'`.execute(db)
  for (const { name } of [...rows].reverse()) await sql`alter table ${sql.table(table)} drop constraint ${sql.ref(name)}`.execute(db)
  return async () => {
    for (const { name, definition } of rows) {
      await sql`alter table ${sql.table(table)} add constraint ${sql.ref(name)} ${sql.raw(definition)}`.execute(db)
    }
  }
}

/** Loads one table in one transaction, its secondary indexes and keys set aside meanwhile. */
const load = async (db: Db, table: keyof Database, plan: SeedPlan, body: (trx: Transaction<Database>, plan: SeedPlan) => Promise<void>): Promise<void> => {
  const held = holdingLast(plan.report)
  await db.transaction().execute(async (trx) => {
    const restoreIndexes = await setAsideIndexes(trx, table)
    const restoreKeys = await setAsideKeys(trx, table)
    await body(trx, { ...plan, report: held.report })
    await restoreIndexes()
    await restoreKeys()
    held.done()
  })
}

/**
 * Reserves keys for the people to load, after every key in use or handed
 * out: the table is locked against other writers until the load commits,
 * so the range stays contiguous. Returns the first.
 */
const reserveKeys = async (db: Db, count: number): Promise<number> => {
  await sql`lock table person in exclusive mode`.execute(db)
  const { rows } = await sql<{ base: string }>`select greatest(nextval(pg_get_serial_sequence('person', 'pk')),
    (select coalesce(max(pk), 0) + 1 from person)) as base`.execute(db)
  const base = Number(rows[0]?.base)
  await sql`select setval(pg_get_serial_sequence('person', 'pk'), ${base + count - 1})`.execute(db)
  return base
}

const loadPeople = async (db: Db, plan: SeedPlan, base: number): Promise<void> => {
  const columns = {
    pk: [] as number[],
    id: [] as string[],
    name: [] as string[],
    name_lower: [] as string[],
    age: [] as Array<number | null>,
    email: [] as Array<string | null>,
    has_address: [] as number[],
    street: [] as Array<string | null>,
    city: [] as Array<string | null>,
    country: [] as Array<string | null>,
    created_at: [] as string[],
    updated_at: [] as string[],
    version: [] as number[]
  }
  const flush = async (): Promise<void> => {
    const c = columns
    await sql`insert into person (${sql.raw(PERSON_COLUMNS.join(', '))})
      select * from unnest(${c.pk}::integer[], ${c.id}::text[], ${c.name}::text[], ${c.name_lower}::text[], ${c.age}::integer[],
        ${c.email}::text[], ${c.has_address}::integer[], ${c.street}::text[], ${c.city}::text[], ${c.country}::text[],
        ${c.created_at}::timestamptz[], ${c.updated_at}::timestamptz[], ${c.version}::integer[])`.execute(db)
    for (const values of Object.values(columns)) values.length = 0
  }
  let loaded = 0
  for (const person of plan.persons()) {
    columns.pk.push(base + loaded)
    for (const column of PERSON_COLUMNS.slice(1) as Array<Exclude<typeof PERSON_COLUMNS[number], 'pk'>>) {
      (columns[column] as unknown[]).push(person[column])
    }
    if (++loaded % PEOPLE_PER_BATCH !== 0) continue
    await flush()
    plan.report('people', loaded, plan.people)
  }
  if (columns.pk.length > 0) {
    await flush()
    plan.report('people', loaded, plan.people)
  }
}

const loadFriendships = async (db: Db, plan: SeedPlan, base: number): Promise<void> => {
  const n = plan.people
  const { deltas, pairNeighbours, friendships } = plan.pattern
  let rows = 0
  for (const { from, to } of chunks(n, PEOPLE_PER_STATEMENT)) {
    const people = sql`generate_series(${from}::integer, ${to - 1}::integer) as i`
    if (deltas.length > 0) {
      const result = await sql`insert into friendship (person_pk, friend_pk)
        select ${base}::integer + i, ${base}::integer + (i + d) % ${n}::integer from ${people} cross join unnest(${deltas}::integer[]) as d`.execute(db)
      rows += Number(result.numAffectedRows)
    }
    if (pairNeighbours) {
      // The last person of an odd number has no neighbour to pair with.
      const result = await sql`insert into friendship (person_pk, friend_pk)
        select ${base}::integer + i, ${base}::integer + case when i % 2 = 0 then i + 1 else i - 1 end from ${people}
        where i < ${n - 1}::integer`.execute(db)
      rows += Number(result.numAffectedRows)
    }
    plan.report('friendships', rows / 2, friendships)
  }
  if (rows / 2 !== friendships) throw new Error(`seeded ${rows / 2} friendships where ${friendships} were planned`)
}

/** Message ids as on SQLite: the seed's millisecond, a 42-bit counter, 32 random bits (UUIDv7). */
const loadMessages = async (db: Db, plan: SeedPlan, base: number): Promise<void> => {
  const each = plan.messagesPerPerson
  const total = plan.people * each
  if (total === 0) return
  const now = sql`${plan.now}::bigint`
  let done = 0
  for (const { from, to } of chunks(plan.people, PEOPLE_PER_STATEMENT)) {
    const result = await sql`insert into message (id, person_pk, text, sender_id, sent_at)
      select lpad(to_hex(${now} >> 16), 8, '0') || '-' || lpad(to_hex(${now} & 65535), 4, '0') || '-7' || lpad(to_hex((i >> 30) & 4095), 3, '0')
          || '-' || to_hex(32768 | ((i >> 16) & 16383)) || '-' || lpad(to_hex(i & 65535), 4, '0')
          || lpad(to_hex((random() * 4294967296)::bigint & 4294967295), 8, '0'),
        ${base}::integer + p, 'Synthetic message ' || i, 'seed', to_timestamp((${plan.now - total}::bigint + i) / 1000.0)
      from (select p, p::bigint * ${each}::integer + k as i
        from generate_series(${from}::integer, ${to - 1}::integer) as p cross join generate_series(0, ${each - 1}::integer) as k) as q`.execute(db)
    done += Number(result.numAffectedRows)
    plan.report('messages', done, total)
  }
}

/** Seeds a PostgreSQL database; see above. */
export const seedPostgres = async (db: Db, plan: SeedPlan): Promise<void> => {
  let base = 0
  await load(db, 'person', plan, async (trx, plan) => {
    base = await reserveKeys(trx, plan.people)
    await loadPeople(trx, plan, base)
  })
  await load(db, 'friendship', plan, async (trx, plan) => { await loadFriendships(trx, plan, base) })
  await load(db, 'message', plan, async (trx, plan) => { await loadMessages(trx, plan, base) })
}
