import {
  cursorAfterPerson, DomainError, isDomainError, personNotFound, type Caller, type CursorPage, type ListPeopleInput, type Message, type Person, type PersonSummary
} from '@people-service/domain'
import type { GraphQLResolveInfo } from 'graphql'
import type { MercuriusContext } from 'mercurius'
import { authorize, GRAPHQL_FIELD_OPERATIONS } from '../auth/policy.js'
import { jsonStringLength } from '../response-size.js'
import { takeTurn } from '../turns.js'
import { listLimit } from './argument-limits.js'
import type { GraphQLContext, SubscriptionContext } from './context.js'
import type { PersonParent } from './loaders.js'
import { fromEvent, MESSAGE_SENT, type MessageSentEvent } from './message-bus.js'
import type {
  ConnectionArgs, CreatePersonArgs, FriendshipArgs, IdArgs, LimitArgs, MessageSentArgs, PeopleArgs, PeopleConnectionArgs, SendMessageArgs, UpdatePersonArgs
} from './schema.js'

/** A subscription's context: Mercurius adds the pubsub of its connection. */
type SubscribeContext = SubscriptionContext & Pick<MercuriusContext, 'pubsub'>

/**
 * The events of one `messageSent` subscription: every message, or those to
 * its person. Each is charged to the subscriber's budget before graphql-js
 * runs the subscription's selection for it, so a costly selection costs its
 * subscriber every time it runs; the events it filters out cost nothing.
 * A refused charge throws, which ends the subscription with that error.
 */
async function * messagesFor (_: unknown, { personId }: MessageSentArgs, context: SubscribeContext): AsyncGenerator<MessageSentEvent> {
  const events = await context.pubsub.subscribe<MessageSentEvent>(MESSAGE_SENT)
  for await (const event of events) {
    if (personId !== null && personId !== undefined && event.messageSent.personId !== personId) continue
    const admitted = context.admitEvent()
    if (!(admitted instanceof Promise ? await admitted : admitted)) return
    yield event
  }
}

/** The caller a mutation acts as, checked against the mutation's row of the policy. */
const actor = (caller: GraphQLContext['caller'], coordinate: keyof typeof GRAPHQL_FIELD_OPERATIONS): Caller =>
  authorize(caller, GRAPHQL_FIELD_OPERATIONS[coordinate])

/** `undefined` for absent and null arguments alike, as the use cases expect. */
const given = <T>(value: T | null | undefined): T | undefined => value ?? undefined

/** A connection calls its cursor `after`: an unreadable one is reported as that argument, not as REST's `cursor`. */
const asAfter = (error: unknown): never => {
  if (isDomainError(error) && error.code === 'INVALID_CURSOR') throw new DomainError('INVALID_CURSOR', 'after is not a cursor this service issued', 'after')
  throw error
}

/** A lookup whose miss is `null` in the answer rather than an error. */
const orNull = async <T>(lookup: Promise<T>, missing: string): Promise<T | null> => {
  try {
    return await lookup
  } catch (error) {
    if (isDomainError(error) && error.code === missing) return null
    throw error
  }
}

const isWhole = (person: PersonParent): person is Person => 'createdAt' in person

/** The whole person behind a list entry, from the request's batch loader. */
const whole = async (person: PersonParent, { loaders }: GraphQLContext): Promise<Person | null> =>
  isWhole(person) ? person : loaders.people.load(person.id)

/**
 * The use case's input from GraphQL's arguments: null is "not given", and an
 * empty name filters nothing. A name search that reads the names a range at
 * a time takes its turn before each further range, as big reads do; its
 * price is the name filter's share of the operation's cost, paid up front.
 */
const listInput = (limit: number | null | undefined, cursor: string | null | undefined, name: string | null | undefined): ListPeopleInput => ({
  ...(given(limit) !== undefined ? { limit: given(limit) } : {}),
  ...(given(cursor) !== undefined ? { cursor: given(cursor) } : {}),
  ...(given(name) ? { name: given(name), beforeNextRange: takeTurn } : {})
})

interface Connection<T> {
  edges: Array<{ cursor: string, node: T }>
  pageInfo: { hasNextPage: boolean, endCursor: string | null }
}

type PersonConnection = Connection<PersonSummary>

/** A page as a Relay connection: each edge with the cursor that resumes after it, so endCursor is the page's `next` when there is one. */
const connectionOf = <T>(page: CursorPage<T>): Connection<T> => ({
  edges: page.items.map((node, i) => ({ cursor: page.cursors[i] as string, node })),
  pageInfo: { hasNextPage: page.next !== undefined, endCursor: page.cursors.at(-1) ?? null }
})

type Resolver<Parent, Args, Result> = (parent: Parent, args: Args, context: GraphQLContext) => Promise<Result> | Result

interface Resolvers {
  Query: {
    person: Resolver<unknown, IdArgs, Person | null>
    people: Resolver<unknown, PeopleArgs, PersonSummary[]>
    peopleConnection: Resolver<unknown, PeopleConnectionArgs, PersonConnection>
    message: Resolver<unknown, IdArgs, Message | null>
  }
  Mutation: {
    createPerson: Resolver<unknown, CreatePersonArgs, Person>
    updatePerson: Resolver<unknown, UpdatePersonArgs, Person>
    deletePerson: Resolver<unknown, IdArgs, string>
    addFriend: Resolver<unknown, FriendshipArgs, Person>
    removeFriend: Resolver<unknown, FriendshipArgs, Person>
    sendMessage: Resolver<unknown, SendMessageArgs, Message>
  }
  Person: {
    age: Resolver<PersonParent, unknown, number | null>
    email: Resolver<PersonParent, unknown, string | null>
    address: Resolver<PersonParent, unknown, Person['address']>
    friends: Resolver<PersonParent, LimitArgs, PersonSummary[]>
    friendsConnection: Resolver<PersonParent, ConnectionArgs, PersonConnection>
    messages: Resolver<PersonParent, LimitArgs, Message[]>
    messagesConnection: Resolver<PersonParent, ConnectionArgs, Connection<Message>>
  }
  Message: {
    text: Resolver<Message, unknown, string>
    sentAt: Resolver<Message, unknown, string>
    person: Resolver<Message, unknown, Person>
  }
  Subscription: {
    messageSent: {
      subscribe: (root: unknown, args: MessageSentArgs, context: SubscribeContext, info: GraphQLResolveInfo) => AsyncGenerator
      resolve: Resolver<MessageSentEvent, MessageSentArgs, Message>
    }
  }
}

/**
 * Resolvers call use cases only; who may reach each field was decided before
 * execution (authorization.ts, checked by the pipeline), and `sendMessage`
 * records that caller as the sender, as REST does. List fields
 * (Person.friends, Person.messages) and Message.person load through the
 * request's batch loaders (loaders.ts): one statement per level of a query.
 */
export const resolvers: Resolvers = {
  Query: {
    person: (_, { id }, { useCases }) => orNull(useCases.getPerson(id), 'PERSON_NOT_FOUND'),
    people: async (_, { limit, cursor, name }, { useCases }) => (await useCases.listPeople(listInput(limit, cursor, name))).items,
    // The page of GET /people: an edge's cursor is the one the page after it
    // would have, so endCursor is REST's `next` when there is one.
    peopleConnection: async (_, { first, after, name }, { useCases }) => {
      const page = await useCases.listPeople(listInput(first, after, name)).catch(asAfter)
      return connectionOf({ ...page, cursors: page.items.map((node) => cursorAfterPerson(node.id)) })
    },
    message: (_, { id }, { useCases }) => orNull(useCases.getMessage(id), 'MESSAGE_NOT_FOUND')
  },
  Mutation: {
    // Each mutation acts as the caller, authorized before execution
    // (`actor` only narrows the type): the actor its event names.
    createPerson: (_, { input }, { useCases, caller }) => useCases.createPerson(actor(caller, 'Mutation.createPerson'), input),
    updatePerson: (_, { id, input }, { useCases, caller }) => useCases.updatePerson(actor(caller, 'Mutation.updatePerson'), id, input),
    deletePerson: async (_, { id }, { useCases, caller }) => {
      await useCases.deletePerson(actor(caller, 'Mutation.deletePerson'), id, { beforeNextStep: takeTurn })
      return id
    },
    addFriend: async (_, { personId, friendId }, { useCases, caller }) => {
      await useCases.befriend(actor(caller, 'Mutation.addFriend'), personId, friendId)
      return useCases.getPerson(personId)
    },
    removeFriend: async (_, { personId, friendId }, { useCases, caller }) => {
      await useCases.unfriend(actor(caller, 'Mutation.removeFriend'), personId, friendId)
      return useCases.getPerson(personId)
    },
    // The sender is the caller, as REST's callerOf gives it.
    sendMessage: (_, { personId, text }, { useCases, caller }) =>
      useCases.sendMessage(actor(caller, 'Mutation.sendMessage'), { personId, text })
  },
  Person: {
    age: async (person, _, context) => (await whole(person, context))?.age ?? null,
    email: async (person, _, context) => (await whole(person, context))?.email ?? null,
    address: async (person, _, context) => (await whole(person, context))?.address ?? null,
    friends: (person, args, { loaders }) => loaders.friends(listLimit('Person.friends', args.limit)).load(person.id),
    messages: (person, args, { loaders }) => loaders.inbox(listLimit('Person.messages', args.limit)).load(person.id),
    // A first page comes from the batch loader: one statement for every
    // parent of a level. A later one (`after`) from the use case, which
    // reads only for the person the cursor was issued for (any other
    // parent's is INVALID_CURSOR before any read): one statement per cursor.
    friendsConnection: async (person, { first, after }, { loaders, useCases }) => {
      const limit = listLimit('Person.friendsConnection', first)
      const cursor = given(after)
      return connectionOf(cursor === undefined
        ? await loaders.friendPages(limit).load(person.id)
        : await useCases.listFriends(person.id, { limit, cursor }).catch(asAfter))
    },
    messagesConnection: async (person, { first, after }, { loaders, useCases }) => {
      const limit = listLimit('Person.messagesConnection', first)
      const cursor = given(after)
      return connectionOf(cursor === undefined
        ? await loaders.inboxPages(limit).load(person.id)
        : await useCases.listInbox(person.id, { limit, cursor }).catch(asAfter))
    }
  },
  Message: {
    // The one value that can be large: counted as it goes into the answer.
    text: (message, _, { response }) => {
      response.spend(jsonStringLength(message.text))
      return message.text
    },
    sentAt: (message) => message.sentAt.toISOString(),
    // A message outlives its recipient only between a delete and its cascade.
    person: async (message, _, { loaders }) => {
      const person = await loaders.people.load(message.personId)
      if (person === null) throw personNotFound(message.personId)
      return person
    }
  },
  Subscription: {
    messageSent: {
      // The connection's session checked the policy, the limits and the cost
      // before Mercurius heard of this subscribe (subscriptions/subscribe-checks.ts).
      subscribe: messagesFor,
      resolve: (event) => fromEvent(event)
    }
  }
}
