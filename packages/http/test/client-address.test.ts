import t from 'tap'
import { clientOf } from '../src/auth/client-address.js'

t.test('an IPv4 address is a client by itself, also when mapped into IPv6', async (t) => {
  t.equal(clientOf('203.0.113.7'), '203.0.113.7')
  t.equal(clientOf('::ffff:203.0.113.7'), '203.0.113.7')
  t.not(clientOf('203.0.113.7'), clientOf('203.0.113.8'))
})

t.test('an IPv6 client is its /56: every address a subscriber can pick is the same client, the next /56 another', async (t) => {
  const client = clientOf('2001:db8:1:200::1')
  t.equal(client, '2001:db8:1:200::/56')
  for (const address of ['2001:db8:1:2ff:ffff:ffff:ffff:ffff', '2001:0db8:0001:0200:0000:0000:0000:0002', '2001:db8:1:2a0::', '2001:DB8:1:2AB::9']) {
    t.equal(clientOf(address), client, address)
  }
  t.not(clientOf('2001:db8:1:300::1'), client)
  t.not(clientOf('2001:db8:2:200::1'), client)
})

t.test('what is not an address is kept as it is', async (t) => {
  t.equal(clientOf(''), '')
  t.equal(clientOf('not an address'), 'not an address')
})
