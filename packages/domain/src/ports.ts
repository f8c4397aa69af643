import type { FriendshipRepository } from './friendship/friendship.repository.js'
import type { MessageEvents } from './message/message.events.js'
import type { MessageRepository } from './message/message.repository.js'
import type { PersonRepository } from './person/person.repository.js'
import type { Clock } from './shared/clock.js'
import type { IdGenerator } from './shared/ids.js'

/** Everything the use cases need from the outside world. */
export interface Ports {
  people: PersonRepository
  friendships: FriendshipRepository
  messages: MessageRepository
  clock: Clock
  ids: IdGenerator
  events: MessageEvents
}
