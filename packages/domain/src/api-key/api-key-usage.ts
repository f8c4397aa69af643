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
  /** Adds the counts to those stored (creating rows as needed), all or nothing. */
  add(counts: readonly UsageCount[]): Promise<void>
  /** One key's counts, oldest day first. */
  byDay(keyId: string): Promise<DailyUsage[]>
}
