import type { PersonInput, PersonPatch } from '@people-service/domain'

/**
 * The query endpoint's schema. Type, field and argument names are part of the
 * public contract (docs/API.md, "Query endpoint"); the input types are ours, since
 * the contract leaves their shape to the service.
 */
export const schema = /* GraphQL */ `
  type Query {
    person(id: ID!): Person
    people(limit: Int = 100, cursor: String, name: String): [Person!]!
    "People ordered by id, a page at a time (Relay cursor connection); cursors are those of GET /people."
    peopleConnection(first: Int = 100, after: String, name: String): PersonConnection!
    message(id: ID!): Message
  }

  type PersonConnection {
    edges: [PersonEdge!]!
    pageInfo: PageInfo!
  }

  type PersonEdge {
    "Where the next page starts when this edge ends one: as GET /people's ?cursor=."
    cursor: String!
    node: Person!
  }

  type PageInfo {
    hasNextPage: Boolean!
    endCursor: String
  }

  type Person {
    id: ID!
    name: String!
    age: Int
    email: String
    address: Address
    friends(limit: Int = 10): [Person!]!
    "The friends a page at a time, as GET /person/<id>/friends pages them (its cursors work here, and the other way round)."
    friendsConnection(first: Int = 10, after: String): PersonConnection!
    messages(limit: Int = 20): [Message!]!
    "The messages to this person, newest first, a page at a time, as GET /person/<id>/messages pages them (the same cursors)."
    messagesConnection(first: Int = 20, after: String): MessageConnection!
  }

  type MessageConnection {
    edges: [MessageEdge!]!
    pageInfo: PageInfo!
  }

  type MessageEdge {
    "Where the next page starts when this edge ends one: as GET /person/<id>/messages' ?cursor=."
    cursor: String!
    node: Message!
  }

  type Address {
    street: String
    city: String
    country: String
  }

  type Message {
    id: ID!
    text: String!
    person: Person!
    senderId: String!
    sentAt: String!
  }

  input AddressInput {
    street: String
    city: String
    country: String
  }

  "A new person: only the name is required."
  input PersonInput {
    name: String!
    age: Int
    email: String
    address: AddressInput
  }

  "A change to a person: fields left out keep their value, null clears an optional field."
  input PersonPatch {
    name: String
    age: Int
    email: String
    address: AddressInput
  }

  type Mutation {
    createPerson(input: PersonInput!): Person!
    updatePerson(id: ID!, input: PersonPatch!): Person!
    deletePerson(id: ID!): ID!
    addFriend(personId: ID!, friendId: ID!): Person!
    removeFriend(personId: ID!, friendId: ID!): Person!
    sendMessage(personId: ID!, text: String!): Message!
  }

  type Subscription {
    "Every message sent from now on, or only those to one person."
    messageSent(personId: ID): Message!
  }
`

/*
 * Argument types as graphql-js hands them to resolvers. A nullable argument
 * may arrive as null as well as absent; the input objects already match the
 * domain's types, so they are reused rather than restated.
 */
export interface IdArgs { id: string }
export interface PeopleArgs { limit?: number | null, cursor?: string | null, name?: string | null }
export interface PeopleConnectionArgs { first?: number | null, after?: string | null, name?: string | null }
export interface LimitArgs { limit?: number | null }
export interface ConnectionArgs { first?: number | null, after?: string | null }
export interface CreatePersonArgs { input: PersonInput }
export interface UpdatePersonArgs { id: string, input: PersonPatch }
export interface FriendshipArgs { personId: string, friendId: string }
export interface SendMessageArgs { personId: string, text: string }
export interface MessageSentArgs { personId?: string | null }
