/**
 * Bodies shown in the OpenAPI document. The document tests check each one
 * against its schema, so an example cannot drift from what is served.
 */
const ADA_ID = '0192f6c4-5b7e-7cc3-a1f0-4c1d2e3f4a5b'
const GRACE_ID = '0192f6c4-6d1a-7f00-8b2e-9a8b7c6d5e4f'
const ADMIN_ID = '0192f6c4-0a00-7000-8000-00000000000a'
const AT = '2026-11-21T10:00:00.000Z'

export const EXAMPLES = {
  person: {
    id: ADA_ID,
    name: 'Ada Lovelace',
    age: 36,
    email: 'ada@example.org',
    address: { street: '12 St James\'s Square', city: 'London', country: 'UK' },
    createdAt: AT,
    updatedAt: AT
  },
  people: [{ id: ADA_ID, name: 'Ada Lovelace' }, { id: GRACE_ID, name: 'Grace Hopper' }],
  deletedPerson: { id: ADA_ID, deleted: true },
  friendship: { personId: ADA_ID, friendId: GRACE_ID },
  endedFriendship: { personId: ADA_ID, friendId: GRACE_ID, deleted: true },
  message: {
    id: '0192f6c5-1111-7000-8000-000000000001',
    personId: ADA_ID,
    text: 'The Analytical Engine weaves algebraic patterns.',
    senderId: ADMIN_ID,
    sentAt: AT
  },
  token: { access_token: 'eyJhbGciOiJIUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiIwMTkyZjZjNCJ9.c2lnbmF0dXJl', token_type: 'Bearer', expires_in: 900 },
  account: { id: ADMIN_ID, username: 'ada', role: 'editor', disabled: false, createdAt: AT },
  accounts: [
    { id: ADMIN_ID, username: 'ada', role: 'editor', disabled: false, createdAt: AT },
    { id: '0192f6c4-0b00-7000-8000-00000000000b', username: 'grace', role: 'admin', disabled: false, createdAt: AT }
  ],
  currentCaller: { id: ADMIN_ID, username: 'ada', role: 'editor', disabled: false, createdAt: AT, scopes: ['people:read', 'people:write', 'messages:send'] },
  deletedAccount: { id: ADMIN_ID, deleted: true },
  passwordChanged: { changed: true },
  apiKey: { id: '0192f6c6-2222-7000-8000-000000000002', name: 'reporting job', scopes: ['people:read'], rateLimit: 100, createdAt: AT },
  apiKeyUsage: { id: '0192f6c6-2222-7000-8000-000000000002', total: 42, byDay: [{ day: '2026-11-21', requests: 42 }] },
  webhook: {
    id: '0192f6c7-3333-7000-8000-000000000003',
    url: 'https://hooks.example.org/people',
    types: ['person.created', 'person.updated', 'person.deleted'],
    description: 'CRM sync',
    disabled: false,
    createdAt: AT
  },
  webhookSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw0WZkQ0pKsXU=',
  delivery: {
    id: '0192f6c8-4444-7000-8000-000000000004',
    eventId: '0192f6c8-4440-7000-8000-000000000040',
    status: 'pending',
    attempts: 2,
    lastStatusCode: 503,
    nextAttemptAt: '2026-11-21T10:00:20.000Z'
  },
  health: { status: 'ok' },
  root: { name: 'People Service', version: '0.1.0', docs: '/docs', graphiql: '/graphiql', openapi: '/openapi.json' },
  unavailable: { status: 'unavailable' },
  events: [
    {
      specversion: '1.0',
      id: '0192f6c7-3333-7000-8000-000000000003',
      source: '/people-service',
      type: 'person.updated',
      subject: `/person/${ADA_ID}`,
      time: AT,
      datacontenttype: 'application/json',
      actorkind: 'apikey',
      actorid: '0192f6c6-2222-7000-8000-000000000002',
      data: {
        id: ADA_ID,
        name: 'Ada Lovelace',
        age: 36,
        email: 'ada@example.org',
        address: { street: '12 St James\'s Square', city: 'London', country: 'UK' },
        createdAt: AT,
        updatedAt: AT
      }
    },
    {
      specversion: '1.0',
      id: '0192f6c7-3333-7000-8000-000000000004',
      source: '/people-service',
      type: 'friendship.deleted',
      subject: `/person/${ADA_ID}/friends/${GRACE_ID}`,
      time: AT,
      datacontenttype: 'application/json',
      actorkind: 'account',
      actorid: ADMIN_ID,
      data: { personId: ADA_ID, friendId: GRACE_ID }
    }
  ]
} as const

export const EXAMPLE_IDS = { person: ADA_ID, friend: GRACE_ID } as const
