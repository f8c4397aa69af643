import { createServer, connect, type Server, type Socket } from 'node:net'

/**
 * A TCP forwarder in front of a dependency, so a test can make it "go away"
 * (refuse and cut every connection) and "come back" without stopping the
 * shared server other tests use.
 */
export interface TcpProxy {
  port: number
  cut(): Promise<void>
  restore(): Promise<void>
  close(): Promise<void>
}

export const tcpProxy = async (target: { host: string, port: number }): Promise<TcpProxy> => {
  const sockets = new Set<Socket>()
  let server: Server | undefined
  let port = 0
  const listen = async (): Promise<void> => {
    server = createServer((client) => {
      const upstream = connect(target.port, target.host)
      for (const socket of [client, upstream]) {
        sockets.add(socket)
        socket.on('close', () => sockets.delete(socket))
        socket.on('error', () => socket.destroy())
      }
      client.pipe(upstream).pipe(client)
    })
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve))
    port = (server!.address() as { port: number }).port
  }
  const stop = async (): Promise<void> => {
    for (const socket of sockets) socket.destroy()
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
    server = undefined
  }
  await listen()
  return { port, cut: stop, restore: listen, close: stop }
}
