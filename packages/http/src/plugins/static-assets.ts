import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { extname, join } from 'node:path'
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import { clientHasCurrent } from '../conditional/entity-tags.js'

/*
 * The documentation pages' files (Swagger UI's, GraphiQL's), answered from
 * memory. @fastify/static opens a read stream for every request, and the
 * stream holds a file descriptor until its answer has been taken: 16
 * pipelined requests made a connection hold 17 files, so 250 connections
 * from one address, within both connection limits, took the 3,600 files
 * of a server allowed 4,096, and the next file it needed (under-pressure's
 * reading of the memory use) shut it down, no credentials asked. A file is
 * read once, when first asked for, and its bytes answer every request.
 */

const TYPES: Readonly<Record<string, string>> = {
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon'
}

interface Asset { body: Buffer, type: string, etag: string }

const assets = new Map<string, Asset>()

/** The file at `path`, read the first time. */
const assetOf = (path: string): Asset => {
  let asset = assets.get(path)
  if (asset === undefined) {
    const body = readFileSync(path)
    asset = { body, type: TYPES[extname(path)] ?? 'application/octet-stream', etag: `"${createHash('sha256').update(body).digest('base64url')}"` }
    assets.set(path, asset)
  }
  return asset
}

/** Answers with the file at `path`: 304 when the client holds it already (If-None-Match, as for a person). */
export const sendAsset = (request: FastifyRequest, reply: FastifyReply, path: string): FastifyReply => {
  const { body, type, etag } = assetOf(path)
  reply.header('etag', etag).header('cache-control', 'public, max-age=0')
  const ifNoneMatch = request.headers['if-none-match']
  if (ifNoneMatch !== undefined && clientHasCurrent(ifNoneMatch, etag)) return reply.code(304).send()
  return reply.type(type).send(body)
}

/**
 * Answers the wildcard route `url` (a plugin's @fastify/static, registered
 * after this) in its place: from memory for the files directly in `root`,
 * 404 for any other name. The route itself never runs: it had served
 * `./swagger-ui-bundle.js` (or `%2e/`, `//`, `x/../`) from disk, holding
 * a file per pipelined request as before, and those of a client that went
 * away were never closed (80 connections one after another: 1,000 files
 * held for good).
 */
export const assetsFromMemory = (app: FastifyInstance, url: string, root: string): void => {
  const names = new Set(readdirSync(root, { withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => entry.name))
  const fromMemory: onRequestHookHandler = (request, reply) => {
    const name = (request.params as Record<string, string | undefined>)['*']
    if (name === undefined || !names.has(name)) return reply.callNotFound()
    sendAsset(request, reply, join(root, name))
  }
  app.addHook('onRoute', (route) => {
    if (route.url === url) route.onRequest = [...[route.onRequest ?? []].flat(), fromMemory]
  })
}
