import type { InstantPosition } from '../shared/page.js'
import type { ApiKey } from './api-key.js'

/** Port: where API keys are kept, revoked ones included (messages name them as senders). */
export interface ApiKeyRepository {
  insert(key: ApiKey): Promise<void>
  findById(id: string): Promise<ApiKey | undefined>
  findByLookupId(lookupId: string): Promise<ApiKey | undefined>
  /** Keys not revoked, oldest first (by creation, then id), at most `limit`, after `after` when given; of one owner, or of everyone. */
  listActive(query: { ownerId?: string, limit: number, after?: InstantPosition }): Promise<ApiKey[]>
  /** How many keys not revoked `ownerId` owns. */
  countActive(ownerId: string): Promise<number>
  /** Marks an active key revoked; false when there is no such active key. */
  revoke(id: string, at: Date): Promise<boolean>
}
