import { randomUUID } from 'node:crypto'
import type { Clock, WebhookSecretBox } from '@people-service/domain'
import type { Kysely } from 'kysely'
import type { Database, Dialect } from '../database.js'
import { type ClaimedDelivery, type Completion, deliveryQueue, type DueWebhook } from './delivery-queue.js'
import { sendWebhook, type SendOutcome } from './webhook-sender.js'

export interface DispatcherSettings {
  /** WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean
  /** One attempt, connection to response. */
  timeoutMs: number
  /** How long a claim holds before another instance may take the delivery: longer than an attempt. */
  leaseMs: number
  /** The first retry's delay; each further one doubles, up to maxDelayMs, jittered down by up to half. */
  baseDelayMs: number
  maxDelayMs: number
  /** How often the queue is looked at when nothing wakes the dispatcher. */
  pollMs: number
  /** Attempts in flight on this instance, in all and per webhook (so one slow endpoint cannot take every slot). */
  concurrency: number
  perWebhook: number
  maxResponseBytes: number
}

export const DISPATCHER_DEFAULTS: Omit<DispatcherSettings, 'allowPrivate'> = {
  timeoutMs: 10_000,
  leaseMs: 60_000,
  baseDelayMs: 5_000,
  maxDelayMs: 60 * 60_000,
  pollMs: 1_000,
  concurrency: 32,
  perWebhook: 4,
  maxResponseBytes: 64 * 1024
}

export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed' | 'lost_lease'

export interface DispatcherLog {
  warn(object: Record<string, unknown>, message: string): void
  error(object: Record<string, unknown>, message: string): void
}

/** The delay before attempt `attempts + 1`: exponential, capped, with jitter so retries of many deliveries spread out. */
export const retryDelay = (attempts: number, settings: Pick<DispatcherSettings, 'baseDelayMs' | 'maxDelayMs'>, random = Math.random): number => {
  const full = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** Math.min(attempts - 1, 40))
  return Math.round(full / 2 + random() * full / 2)
}

/** What one attempt's outcome makes of the delivery. */
export const completionOf = (outcome: SendOutcome, delivery: ClaimedDelivery, now: Date, settings: DispatcherSettings): Completion & { gone?: true } => {
  const { statusCode } = outcome
  if (statusCode !== null && statusCode >= 200 && statusCode < 300) return { status: 'delivered', lastStatusCode: statusCode }
  if (statusCode === 410) return { status: 'failed', lastStatusCode: statusCode, gone: true }
  if (statusCode === null && outcome.refused) return { status: 'failed', lastStatusCode: null }
  const nextAttemptAt = new Date(now.getTime() + retryDelay(delivery.attempts, settings))
  if (nextAttemptAt > delivery.giveUpAt) return { status: 'failed', lastStatusCode: statusCode }
  return { status: 'pending', lastStatusCode: statusCode, nextAttemptAt }
}

/**
 * Sends the deliveries of webhook_delivery: claims due ones under a lease,
 * signs and POSTs each, records the outcome. Attempts run beside the API on
 * the event loop, never in a request's path; their number is bounded in all
 * and per webhook, so a slow or dead endpoint holds its own slots only.
 */
export const webhookDispatcher = (options: {
  db: Kysely<Database>
  dialect: Dialect
  secrets: WebhookSecretBox
  clock: Clock
  settings: DispatcherSettings
  log: DispatcherLog
}) => {
  const { secrets, clock, settings, log } = options
  const queue = deliveryQueue(options.db, options.dialect)
  const token = randomUUID()
  const inFlight = new Map<string, number>()
  const attempts = new Set<Promise<void>>()
  const outcomes: Record<DeliveryOutcome, number> = { delivered: 0, retrying: 0, failed: 0, lost_lease: 0 }
  let total = 0
  let running = false
  let again = false
  let stopped = false
  let timer: NodeJS.Timeout | undefined

  const attempt = async (webhook: DueWebhook, delivery: ClaimedDelivery): Promise<void> => {
    let outcome: SendOutcome
    try {
      const secret = secrets.open(webhook.id, webhook.sealedSecret)
      outcome = await sendWebhook({ url: webhook.url, eventId: delivery.eventId, body: delivery.body, secret }, settings)
    } catch {
      // The secret does not open: sealed under another key (WEBHOOK_SECRET_KEY or JWT_SECRET changed).
      log.error({ webhookId: webhook.id, deliveryId: delivery.id }, 'webhook secret cannot be opened with this key; delivery failed')
      outcome = { statusCode: null, error: 'secret cannot be opened', refused: true }
    }
    const completion = completionOf(outcome, delivery, clock.now(), settings)
    const recorded = await queue.complete(delivery.id, token, completion)
    if (recorded && completion.gone === true) await queue.disable(webhook.id)
    const counted: DeliveryOutcome = !recorded ? 'lost_lease' : completion.status === 'pending' ? 'retrying' : completion.status
    outcomes[counted]++
    if (completion.status !== 'delivered') {
      log.warn({
        webhookId: webhook.id,
        deliveryId: delivery.id,
        attempt: delivery.attempts,
        statusCode: outcome.statusCode,
        ...(outcome.statusCode === null ? { reason: outcome.error } : {}),
        outcome: counted,
        disabled: completion.gone === true
      }, 'webhook delivery attempt not accepted')
    }
  }

  const start = (webhook: DueWebhook, delivery: ClaimedDelivery) => {
    total++
    inFlight.set(webhook.id, (inFlight.get(webhook.id) ?? 0) + 1)
    const task = attempt(webhook, delivery)
      .catch((error: unknown) => log.error({ err: error, deliveryId: delivery.id }, 'webhook delivery could not be recorded; its lease will run out'))
      .finally(() => {
        total--
        const left = (inFlight.get(webhook.id) ?? 1) - 1
        if (left === 0) inFlight.delete(webhook.id)
        else inFlight.set(webhook.id, left)
        attempts.delete(task)
        wake()
      })
    attempts.add(task)
  }

  const claimDue = async (): Promise<void> => {
    const now = clock.now()
    for (const webhook of await queue.dueWebhooks(now)) {
      const free = Math.min(settings.perWebhook - (inFlight.get(webhook.id) ?? 0), settings.concurrency - total)
      if (free <= 0) continue
      const claimed = await queue.claim(webhook.id, free, now, new Date(now.getTime() + settings.leaseMs), token)
      for (const delivery of claimed) start(webhook, delivery)
      if (total >= settings.concurrency) return
    }
  }

  /** Looks at the queue now (after a relay step, an attempt's end), once at a time. */
  const wake = (): void => {
    if (stopped) return
    if (running) {
      again = true
      return
    }
    running = true
    claimDue()
      .catch((error: unknown) => log.error({ err: error }, 'webhook deliveries could not be claimed'))
      .finally(() => {
        running = false
        if (again) {
          again = false
          wake()
        }
      })
  }

  return {
    start () {
      timer = setInterval(wake, settings.pollMs)
      timer.unref()
      wake()
    },
    wake,
    /** Attempts of this instance by outcome, since it started. */
    outcomes: (): Readonly<Record<DeliveryOutcome, number>> => ({ ...outcomes }),
    oldestPending: () => queue.oldestPending(),
    /** The delivery log's pruning: finished deliveries queued before `before`, at most `limit`. */
    pruneBefore: (before: Date, limit: number) => queue.pruneBefore(before, limit),
    /** Stops claiming and waits for the attempts in flight (each ends within its timeout). */
    async stop () {
      stopped = true
      clearInterval(timer)
      await Promise.allSettled([...attempts])
    }
  }
}

export type WebhookDispatcher = ReturnType<typeof webhookDispatcher>
