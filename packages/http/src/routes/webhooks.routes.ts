import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { WEBHOOK_LIMITS, type WebhookUseCases } from '@people-service/domain'
import { Type } from '@sinclair/typebox'
import { errorResponses } from '../schemas/error.schema.js'
import { EXAMPLES } from '../schemas/examples.js'
import { DeliveriesQuery, WebhooksQuery } from '../schemas/list.schemas.js'
import { documented } from '../schemas/response.schemas.js'
import { CreatedWebhookSchema, DeliveryParams, DeliverySchema, NewWebhookSchema, WebhookChangesSchema, WebhookIdParams, WebhookSchema } from '../schemas/webhook.schemas.js'
import { linkNext } from './links.js'

const SIGNING = 'Each event is POSTed as `application/cloudevents+json` with the Standard Webhooks headers `webhook-id` (the event id), ' +
  '`webhook-timestamp` (Unix seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed by the secret\'s bytes after `whsec_`). ' +
  'A 2xx within 10 s is delivered; anything else is retried with exponential back-off and jitter for 24 hours, then `failed`; 410 disables the webhook.'

export const webhooksRoutes: FastifyPluginAsyncTypebox<{ webhooks: WebhookUseCases }> = async (app, { webhooks }) => {
  app.post('/webhooks', {
    config: { operation: 'webhooks.create' },
    schema: {
      operationId: 'createWebhook',
      tags: ['webhooks'],
      summary: 'Register a webhook; its signing secret is in this response only',
      description: `${SIGNING} A deployment has at most ${WEBHOOK_LIMITS.maxWebhooks} webhooks: one more is 409 TOO_MANY_WEBHOOKS. ` +
        'A URL that is not https://, or whose name resolves to a loopback, private, link-local or metadata address, is 400.',
      body: NewWebhookSchema,
      response: {
        201: documented(CreatedWebhookSchema, {
          description: 'Created: the secret, shown this once',
          example: { ...EXAMPLES.webhook, secret: EXAMPLES.webhookSecret },
          headers: ['Cache-Control']
        }),
        ...errorResponses(400, 401, 403, 409, 429)
      }
    }
  }, async (request, reply) => {
    const created = await webhooks.createWebhook(request.body)
    return reply.code(201).header('cache-control', 'no-store').send(created)
  })

  app.get('/webhooks', {
    config: { operation: 'webhooks.list' },
    schema: {
      operationId: 'listWebhooks',
      tags: ['webhooks'],
      summary: 'The webhooks, oldest first, without their secrets',
      description: 'Keyset pagination: follow the `Link: <…>; rel="next"` header while it is present.',
      querystring: WebhooksQuery,
      response: {
        200: documented(Type.Array(WebhookSchema), { description: 'A page of webhooks', example: [EXAMPLES.webhook], headers: ['Link'] }),
        ...errorResponses(400, 401, 403, 429)
      }
    }
  }, async (request, reply) => {
    const { limit, cursor } = request.query
    const page = await webhooks.listWebhooks({ ...(limit === undefined ? {} : { limit }), ...(cursor === undefined ? {} : { cursor }) })
    linkNext(request, reply, page.next)
    return page.items
  })

  app.get('/webhooks/:id', {
    config: { operation: 'webhooks.get' },
    schema: {
      operationId: 'getWebhook',
      tags: ['webhooks'],
      summary: 'A webhook, without its secret',
      params: WebhookIdParams,
      response: {
        200: documented(WebhookSchema, { description: 'The webhook', example: EXAMPLES.webhook }),
        ...errorResponses(401, 403, 404, 429)
      }
    }
  }, async (request) => webhooks.getWebhook(request.params.id))

  app.patch('/webhooks/:id', {
    config: { operation: 'webhooks.update' },
    schema: {
      operationId: 'updateWebhook',
      tags: ['webhooks'],
      summary: 'Change a webhook\'s URL, types, description, or enable and disable it',
      description: 'Fields left out keep their value. A new URL is checked as at registration. Enabling a webhook resumes its pending deliveries.',
      params: WebhookIdParams,
      body: WebhookChangesSchema,
      response: {
        200: documented(WebhookSchema, { description: 'The webhook after the change', example: { ...EXAMPLES.webhook, disabled: true } }),
        ...errorResponses(400, 401, 403, 404, 429)
      }
    }
  }, async (request) => webhooks.updateWebhook(request.params.id, request.body))

  app.delete('/webhooks/:id', {
    config: { operation: 'webhooks.delete' },
    schema: {
      operationId: 'deleteWebhook',
      tags: ['webhooks'],
      summary: 'Delete a webhook and its delivery log',
      params: WebhookIdParams,
      response: {
        200: documented(Type.Object({ id: Type.String(), deleted: Type.Literal(true) }), { description: 'Deleted', example: { id: EXAMPLES.webhook.id, deleted: true } }),
        ...errorResponses(401, 403, 404, 429)
      }
    }
  }, async (request) => {
    await webhooks.deleteWebhook(request.params.id)
    return { id: request.params.id, deleted: true as const }
  })

  app.get('/webhooks/:id/deliveries', {
    config: { operation: 'webhooks.deliveries' },
    schema: {
      operationId: 'listWebhookDeliveries',
      tags: ['webhooks'],
      summary: 'A webhook\'s deliveries, newest first',
      description: 'One delivery per event sent to the webhook, with its attempts so far. Keyset pagination: follow the `Link: <…>; rel="next"` header while it is present.',
      params: WebhookIdParams,
      querystring: DeliveriesQuery,
      response: {
        200: documented(Type.Array(DeliverySchema), { description: 'A page of deliveries', example: [EXAMPLES.delivery], headers: ['Link'] }),
        ...errorResponses(400, 401, 403, 404, 429)
      }
    }
  }, async (request, reply) => {
    const { limit, cursor } = request.query
    const page = await webhooks.listDeliveries(request.params.id, { ...(limit === undefined ? {} : { limit }), ...(cursor === undefined ? {} : { cursor }) })
    linkNext(request, reply, page.next)
    return page.items
  })

  app.post('/webhooks/:id/deliveries/:deliveryId/retry', {
    config: { operation: 'webhooks.retry' },
    schema: {
      operationId: 'retryWebhookDelivery',
      tags: ['webhooks'],
      summary: 'Send a delivery again, now',
      description: 'The delivery becomes pending and due at once, with a new 24-hour retry window, whatever its status was; it is sent while the webhook is enabled.',
      params: DeliveryParams,
      response: {
        202: documented(Type.Object({ id: Type.String(), status: Type.Literal('pending') }), { description: 'Queued', example: { id: EXAMPLES.delivery.id, status: 'pending' } }),
        ...errorResponses(401, 403, 404, 429)
      }
    }
  }, async (request, reply) => reply.code(202).send(await webhooks.retryDelivery(request.params.id, request.params.deliveryId)))
}
