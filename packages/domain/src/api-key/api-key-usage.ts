/** Requests served to one key on one UTC day. */
export interface DailyUsage {
  /** YYYY-MM-DD, UTC. */
  day: string
  requests: number
}

export interface UsageCount extends DailyUsage {
  keyId: string
}

/** Port: stored request counts per key and day. */
export interface ApiKeyUsageRepository {
  /**
   * Adds the counts to those stored (creating rows as needed), all or
   * nothing, whatever their number (the meter sends USAGE_FLUSH_CHUNK at most). Counts of a key that no longer exists (its account was deleted
   * after they were counted) are dropped: a deleted key has no usage to show.
   */
  add(counts: readonly UsageCount[]): Promise<void>
  /** One key's counts, oldest day first. */
  byDay(keyId: string): Promise<DailyUsage[]>
}
