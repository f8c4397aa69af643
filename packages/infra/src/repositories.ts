import type { Ports } from '@people-service/domain'
import type { DatabaseHandle } from './database.js'
import { kyselyFriendshipRepository } from './friendship/kysely-friendship.repository.js'
import { kyselyMessageRepository } from './message/kysely-message.repository.js'
import { kyselyPersonRepository } from './person/kysely-person.repository.js'

/** The domain's storage ports over one database. */
export const createRepositories = ({ db, dialect }: DatabaseHandle): Pick<Ports, 'people' | 'friendships' | 'messages'> => ({
  people: kyselyPersonRepository(db, dialect),
  friendships: kyselyFriendshipRepository(db),
  messages: kyselyMessageRepository(db)
})
