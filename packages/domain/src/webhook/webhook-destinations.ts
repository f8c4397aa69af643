/**
 * Port: may the service send to this URL? Refuses what would reach the
 * deployment's own network (loopback, private, link-local, metadata
 * addresses) unless private destinations are allowed.
 */
export interface WebhookDestinations {
  /** Why the URL (absolute http(s), checkWebhookUrl's) is refused, or undefined when it may be registered. */
  refusal(url: string): Promise<string | undefined>
}

/** Every well-formed URL: for in-memory ports and tests of other things. */
export const anyWebhookDestination: WebhookDestinations = { refusal: async () => undefined }
