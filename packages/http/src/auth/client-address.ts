import ipaddr from 'ipaddr.js'

/**
 * Bits of an IPv6 address that name one client for the login limits: a
 * subscriber is handed a /56 (or a /64) and picks any address inside it at
 * will, so counting whole addresses would give one client 2^72 fresh
 * budgets of failed logins. An IPv4 address, or one mapped into IPv6, is
 * counted whole.
 */
export const IPV6_CLIENT_PREFIX = 56

/** The client an address belongs to: the IPv4 address, or the IPv6 address's /56 as `prefix/56`. */
export const clientOf = (ip: string): string => {
  if (!ipaddr.isValid(ip)) return ip
  const parsed = ipaddr.process(ip)
  if (parsed.kind() === 'ipv4') return parsed.toString()
  const bytes = parsed.toByteArray()
  const kept = IPV6_CLIENT_PREFIX / 8
  for (let i = kept; i < bytes.length; i++) bytes[i] = 0
  return `${ipaddr.fromByteArray(bytes).toString()}/${IPV6_CLIENT_PREFIX}`
}
