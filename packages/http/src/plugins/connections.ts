import { compile } from '@fastify/proxy-addr'
import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import { clientOf } from '../auth/client-address.js'

/*
 * Every open connection holds a file descriptor, and an idle one costs its
 * client nothing. A client that opened 400 connections to a server allowed
 * 300 files took the last of them: the server could accept nothing more,
 * and the next file it needed (under-pressure reading the memory use)
 * threw EMFILE and shut the process down, without credentials asked.
 *
 * So the server takes at most `max` connections (Node's maxConnections:
 * one more is closed as it is accepted), which the composition root sets
 * below the process' file limit, and one client address at most
 * `perAddress` of them, and never more than a quarter of `max`, so that one
 * client cannot take them all (a server allowed 300 files takes 162: one
 * address had held them all under a flat 256). An
 * address is counted as the login limits count it (an IPv6 client by its
 * /56). A trusted proxy speaks for many clients: its connections are not
 * counted per address.
 */
export interface ConnectionLimits {
  /** Connections at once; 0: no limit of the service's own. */
  max: number
  /** Connections at once from one client address; 0: none. */
  perAddress: number
}

export const CONNECTION_DEFAULTS: ConnectionLimits = { max: 0, perAddress: 256 }

export const limitConnections = (server: Server, { max, perAddress: asked }: ConnectionLimits, trustProxy: false | string[]): void => {
  if (max > 0) server.maxConnections = max
  if (asked === 0) return
  const perAddress = max > 0 ? Math.min(asked, Math.max(1, Math.floor(max / 4))) : asked
  const isProxy = trustProxy === false ? () => false : compile(trustProxy)
  const open = new Map<string, number>()
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress
    // Undefined once the peer has gone already: nothing to count.
    if (address === undefined || isProxy(address, 0)) return
    const client = clientOf(address)
    const count = (open.get(client) ?? 0) + 1
    if (count > perAddress) {
      socket.destroy()
      return
    }
    open.set(client, count)
    socket.once('close', () => {
      const left = (open.get(client) ?? 1) - 1
      if (left === 0) open.delete(client)
      else open.set(client, left)
    })
  })
}
