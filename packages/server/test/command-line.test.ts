import t from 'tap'
import { connect } from 'node:net'
import { failureCause } from '../src/command-line.js'

/** The error a connection gets from a host name of two addresses, both refusing (port 1 on loopback: nothing listens). */
const refusedTwice = async (): Promise<unknown> => new Promise((resolve) => {
  const socket = connect({
    host: 'db.example',
    port: 1,
    autoSelectFamily: true,
    lookup: (_host, _options, callback: (error: null, addresses: Array<{ address: string, family: number }>) => void) =>
      callback(null, [{ address: '::1', family: 6 }, { address: '127.0.0.1', family: 4 }])
  })
  socket.on('error', resolve)
})

t.test('a failure is said in one line, with each refused address when a host name had several', async (t) => {
  const error = await refusedTwice()
  t.ok(error instanceof AggregateError && error.message === '', 'Node says nothing in the message itself')
  // Where IPv6 is off, ::1 fails otherwise (EADDRNOTAVAIL): still said.
  t.match(failureCause(error), /^connect E[A-Z]+ ::1:1; connect ECONNREFUSED 127\.0\.0\.1:1$/)
  t.equal(failureCause(new Error('disk full')), 'disk full')
  t.equal(failureCause(Object.assign(new Error(''), { code: 'EACCES' })), 'EACCES')
  t.equal(failureCause('thrown as a string'), 'thrown as a string')
})
