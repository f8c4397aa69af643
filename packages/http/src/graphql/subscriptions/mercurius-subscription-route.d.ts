/*
 * Mercurius' WebSocket route as a plugin of its own. Mercurius registers it
 * with its HTTP routes; here the HTTP routes are the service's own
 * (http-route.ts), so it is registered alone, on the service's GET route.
 * The options are those Mercurius' routes pass it (lib/routes.js).
 */
declare module 'mercurius/lib/subscription.js' {
  import type { FastifyPluginAsync, FastifyRequest, RouteOptions } from 'fastify'
  import type { ExecutionResult } from 'graphql'

  export interface SubscriptionRouteOptions {
    /** The HTTP GET route of the same path: the WebSocket handler is added to it. */
    getOptions: RouteOptions
    /** Mercurius' PubSub (`app.graphql.pubsub`). */
    subscriber: unknown
    /** The context of a connection, made at its connection_init. */
    subscriptionContextFn(socket: unknown, request: FastifyRequest): object | Promise<object>
    /** Shapes the errors of an event whose selection failed. */
    errorFormatter(execution: ExecutionResult, context: object): { statusCode: number, response: unknown }
  }

  const subscriptionRoute: FastifyPluginAsync<SubscriptionRouteOptions>
  export default subscriptionRoute
}
