import ipaddr from 'ipaddr.js'

/** The ranges proxy-addr (Fastify's `trustProxy`) puts behind its names. */
const NAMED_RANGES: Record<string, string[]> = {
  loopback: ['127.0.0.1/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
}

interface Interval {
  from: bigint
  to: bigint
}

const IPV4_MAPPED = ipaddr.parseCIDR('::ffff:0:0/96')

/**
 * The address family (4 or 6) whose every address the TRUST_PROXY entries (addresses, CIDR
 * ranges and proxy-addr's names, already checked for form) trust together, if any:
 * `0.0.0.0/1,128.0.0.0/1` is `true` by another spelling. Peers are judged as proxy-addr judges
 * them: an IPv4-mapped peer as its IPv4 address, so IPv4-mapped ranges of /96 or longer count
 * for IPv4, and the IPv4-mapped block itself needs no covering for IPv6.
 */
export function familyTrustedWhole(entries: readonly string[]): 4 | 6 | undefined {
  const v4: Interval[] = []
  const v6: Interval[] = [interval(IPV4_MAPPED[0], IPV4_MAPPED[1])]
  for (const entry of entries.flatMap((e) => NAMED_RANGES[e] ?? [e])) {
    const [address, bits] = cidr(entry)
    if (address.kind() === 'ipv4') v4.push(interval(address, bits))
    else if ((address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96)
      v4.push(interval((address as ipaddr.IPv6).toIPv4Address(), bits - 96))
    else v6.push(interval(address, bits))
  }
  if (coversAll(v4, 32)) return 4
  if (coversAll(v6, 128)) return 6
  return undefined
}

function cidr(entry: string): [ipaddr.IPv4 | ipaddr.IPv6, number] {
  if (entry.includes('/')) return ipaddr.parseCIDR(entry)
  const address = ipaddr.parse(entry)
  return [address, address.kind() === 'ipv4' ? 32 : 128]
}

function interval(address: ipaddr.IPv4 | ipaddr.IPv6, bits: number): Interval {
  const width = address.kind() === 'ipv4' ? 32 : 128
  const value = address.toByteArray().reduce((n, byte) => (n << 8n) | BigInt(byte), 0n)
  const host = (1n << BigInt(width - bits)) - 1n
  return { from: value & ~host, to: (value & ~host) | host }
}

function coversAll(intervals: Interval[], width: number): boolean {
  let next = 0n
  for (const { from, to } of [...intervals].sort((a, b) =>
    a.from < b.from ? -1 : a.from > b.from ? 1 : 0,
  )) {
    if (from > next) return false
    if (to + 1n > next) next = to + 1n
  }
  return next === 1n << BigInt(width)
}
