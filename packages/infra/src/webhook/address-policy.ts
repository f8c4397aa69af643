import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns'
import { BlockList, isIP, type LookupFunction } from 'node:net'
import type { WebhookDestinations } from '@people-service/domain'

/*
 * Where webhooks may not go: the deployment's own machine and network, and
 * the cloud metadata service (169.254.169.254 is link-local). IPv4-mapped
 * IPv6 addresses (::ffff:10.0.0.1) are judged as the IPv4 address they are.
 */
const refused = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4]
] as const) refused.addSubnet(network, prefix, 'ipv4')
for (const [network, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32], ['64:ff9b::', 96], ['100::', 64]
] as const) refused.addSubnet(network, prefix, 'ipv6')

const MAPPED = /^::ffff:(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i

/** The IPv4 address an IPv4-mapped IPv6 address stands for, else the address itself. */
const unmapped = (address: string): string => {
  const match = MAPPED.exec(address)
  if (match === null) return address
  if (match[1] !== undefined) return match[1]
  const high = parseInt(match[2] ?? '0', 16)
  const low = parseInt(match[3] ?? '0', 16)
  return [high >> 8, high & 255, low >> 8, low & 255].join('.')
}

/** Loopback, private, link-local, CGNAT, metadata, multicast or reserved: not a public address. */
export const isRefusedAddress = (address: string): boolean => {
  const plain = unmapped(address.replace(/^\[|\]$/g, '').toLowerCase())
  const family = isIP(plain)
  if (family === 0) return true
  return refused.check(plain, family === 4 ? 'ipv4' : 'ipv6')
}

export class RefusedDestinationError extends Error {
  readonly code = 'WEBHOOK_DESTINATION_REFUSED'
  constructor (host: string) {
    super(`${host} resolves to an address webhooks may not reach (loopback, private, link-local or metadata)`)
  }
}

/**
 * A DNS lookup for sockets that refuses a name when any of its addresses is
 * refused: checked when each connection is made, so a name that changes
 * its answer after registration (DNS rebinding) is refused all the same.
 */
export const refusingLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options as LookupOptions, all: true } satisfies LookupAllOptions, (error, addresses: LookupAddress[]) => {
    if (error !== null) return callback(error, '', 0)
    if (addresses.length === 0 || addresses.some(({ address }) => isRefusedAddress(address))) return callback(new RefusedDestinationError(hostname), '', 0)
    if ((options as LookupOptions).all === true) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, addresses)
    const [first] = addresses as [LookupAddress]
    return callback(null, first.address, first.family)
  })
}

/** How long registration waits for a name to resolve; past it the name counts as not resolving yet. */
const REGISTRATION_LOOKUP_MS = 2000

const resolveAll = (hostname: string): Promise<LookupAddress[] | undefined> => new Promise((resolve) => {
  const timer = setTimeout(() => resolve(undefined), REGISTRATION_LOOKUP_MS)
  dnsLookup(hostname, { all: true }, (error, addresses) => {
    clearTimeout(timer)
    resolve(error === null ? addresses : undefined)
  })
})

/** The host of a URL as an address or a DNS name (URL keeps IPv6 literals in brackets). */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[|\]$/g, '')

/**
 * The destinations webhooks may use: `https://` to public addresses; with
 * `allowPrivate` (WEBHOOK_ALLOW_PRIVATE) also `http://` and any address. A
 * name that does not resolve yet is accepted: each delivery checks again.
 */
export const webhookDestinations = ({ allowPrivate }: { allowPrivate: boolean }): WebhookDestinations => ({
  async refusal (href) {
    if (allowPrivate) return undefined
    const url = new URL(href)
    if (url.protocol !== 'https:') return 'must be an https:// URL'
    const host = hostOf(url)
    if (isIP(host) !== 0) return isRefusedAddress(host) ? 'must not name a loopback, private, link-local or metadata address' : undefined
    const addresses = await resolveAll(host)
    if (addresses?.some(({ address }) => isRefusedAddress(address)) === true) {
      return `resolves to an address webhooks may not reach (loopback, private, link-local or metadata): ${host}`
    }
    return undefined
  }
})
