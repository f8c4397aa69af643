import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { extname, join } from 'node:path'
import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import { clientHasCurrent } from '../conditional/entity-tags.js'

/*
 * The documentation pages' files (Swagger UI's, GraphiQL's) and the OpenAPI
 * document, answered from memory. @fastify/static opens a read stream for
 * every request, and the stream holds a file descriptor until its answer
 * has been taken: 16 pipelined requests made a connection hold 17 files, so
 * 250 connections from one address, within both connection limits, took the
 * 3,600 files of a server allowed 4,096, and the next file it needed
 * (under-pressure's reading of the memory use) shut it down, no credentials
 * asked. A file is read once, when first asked for, and its bytes answer
 * every request.
 *
 * Text is compressed once too, brotli and gzip, on the thread pool, when
 * first asked for (none of it changes while the process runs): each request
 * gets the smallest representation its Accept-Encoding allows, with its own
 * strong ETag, `Vary: Accept-Encoding`, and 304 when the client holds it.
 * Swagger UI's bundle (1.5 MB) is 371 KB as brotli (quality 6: 0.1 s once;
 * 11 took 3 s for 10% less) and 414 KB as gzip.
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

/** Types worth compressing: text. Images are compressed already. */
const COMPRESSIBLE = /^(?:text\/|application\/(?:javascript|json|x-yaml)|image\/svg\+xml)/

type Coding = 'br' | 'gzip'

/** In the order preferred: the smaller first. */
const CODINGS: readonly Coding[] = ['br', 'gzip']

const compress: Record<Coding, (body: Buffer) => Promise<Buffer>> = {
  br: (body) => promisify(brotliCompress)(body, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 6, [constants.BROTLI_PARAM_SIZE_HINT]: body.length }
  }),
  gzip: (body) => promisify(gzip)(body, { level: 9 })
}

interface Representation { body: Buffer, etag: string }

/** One asset: its type and its bytes, as they are and, for text, compressed. */
export interface Asset {
  type: string
  identity: Representation
  /** Text's compressed representations, made at the first call; a coding is left out where it would not be smaller. */
  encoded?: () => Promise<Partial<Record<Coding, Representation>>>
}

const tagOf = (body: Buffer, suffix = ''): string => `"${createHash('sha256').update(body).digest('base64url')}${suffix}"`

/** An asset of `body` as `type`: text is compressed once, off the event loop, the first time it is sent. */
export const assetOf = (body: Buffer, type: string): Asset => {
  const identity = { body, etag: tagOf(body) }
  if (!COMPRESSIBLE.test(type)) return { type, identity }
  let encoded: Promise<Partial<Record<Coding, Representation>>> | undefined
  const encode = async (): Promise<Partial<Record<Coding, Representation>>> => {
    const all = await Promise.all(CODINGS.map(async (coding) => [coding, await compress[coding](body)] as const))
    return Object.fromEntries(all.filter(([, compressed]) => compressed.length < body.length)
      .map(([coding, compressed]) => [coding, { body: compressed, etag: tagOf(body, `-${coding}`) }]))
  }
  return { type, identity, encoded: () => (encoded ??= encode()) }
}

/** The codings Accept-Encoding allows (RFC 9110 §12.5.3): listed with q > 0, or covered by `*`. */
const acceptedCodings = (header: string | undefined): Set<Coding> => {
  const accepted = new Set<Coding>()
  if (header === undefined) return accepted
  const weights = new Map<string, number>()
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';')
    const q = params.map((param) => /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(param)?.[1]).find((value) => value !== undefined)
    weights.set(name.trim(), q === undefined ? 1 : Number(q))
  }
  for (const coding of CODINGS) {
    const weight = weights.get(coding) ?? weights.get('*') ?? 0
    if (weight > 0) accepted.add(coding)
  }
  return accepted
}

/** Answers with `asset`: its smallest representation the client accepts, 304 when the client holds it already. */
export const sendAsset = async (request: FastifyRequest, reply: FastifyReply, asset: Asset): Promise<FastifyReply> => {
  let chosen = asset.identity
  let coding: Coding | undefined
  if (asset.encoded !== undefined) {
    // Added to what is there (CORS' `Origin`), not in its place.
    const vary = reply.getHeader('vary')
    reply.header('vary', vary === undefined ? 'Accept-Encoding' : `${String(vary)}, Accept-Encoding`)
    const accepted = acceptedCodings(request.headers['accept-encoding'])
    const encoded = accepted.size === 0 ? {} : await asset.encoded()
    coding = CODINGS.find((candidate) => accepted.has(candidate) && encoded[candidate] !== undefined)
    if (coding !== undefined) chosen = encoded[coding] as Representation
  }
  reply.header('etag', chosen.etag).header('cache-control', 'public, max-age=0')
  const ifNoneMatch = request.headers['if-none-match']
  if (ifNoneMatch !== undefined && clientHasCurrent(ifNoneMatch, chosen.etag)) return reply.code(304).send()
  if (coding !== undefined) reply.header('content-encoding', coding)
  return reply.type(asset.type).send(chosen.body)
}

const files = new Map<string, Asset>()

/** The file at `path` as an asset, read the first time. */
const fileAsset = (path: string): Asset => {
  let asset = files.get(path)
  if (asset === undefined) {
    asset = assetOf(readFileSync(path), TYPES[extname(path)] ?? 'application/octet-stream')
    files.set(path, asset)
  }
  return asset
}

/** Answers with the file at `path` (sendAsset). */
export const sendFile = async (request: FastifyRequest, reply: FastifyReply, path: string): Promise<FastifyReply> =>
  sendAsset(request, reply, fileAsset(path))

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
  const fromMemory: onRequestHookHandler = async (request, reply) => {
    const name = (request.params as Record<string, string | undefined>)['*']
    if (name === undefined || !names.has(name)) return reply.callNotFound()
    return sendFile(request, reply, join(root, name))
  }
  app.addHook('onRoute', (route) => {
    if (route.url === url) route.onRequest = [...[route.onRequest ?? []].flat(), fromMemory]
  })
}
