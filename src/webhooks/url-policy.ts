import { lookup } from 'node:dns/promises'
import ipaddr from 'ipaddr.js'

/** An address a host name resolved to. */
export interface ResolvedAddress {
  address: string
  family: 4 | 6
}

/** Resolves a host name to every address it has (A and AAAA); injectable for tests. */
export type Resolve = (hostname: string) => Promise<ResolvedAddress[]>

export const resolveWithDns: Resolve = async (hostname) => {
  const found = await lookup(hostname, { all: true, verbatim: true })
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }))
}

/** A URL that passed the policy, and the addresses it was checked against (connect to these only). */
export interface VettedUrl {
  url: URL
  addresses: ResolvedAddress[]
}

/** Why a URL is refused: the reason is the end of a sentence, shown to the account holder. */
export class UrlRefused extends Error {
  constructor(readonly reason: string) {
    super(`The webhook URL is refused: it ${reason}.`)
    this.name = 'UrlRefused'
  }
}

/** ipaddr.js range names, as words for the refusal message. */
const RANGE_NAMES: Record<string, string> = {
  unspecified: 'an unspecified address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address',
  private: 'a private address',
  uniqueLocal: 'a private (unique local) address',
  reserved: 'a reserved address',
}

/** Ranges a local receiver may sit in, allowed only in insecure mode. */
const LOCAL_DEVELOPMENT_RANGES = new Set(['loopback', 'private', 'uniqueLocal', 'carrierGradeNat'])

/**
 * Server-side request forgery defence (OWASP API7:2023): a webhook URL must be https and every
 * address its host resolves to must be public unicast. Loopback, RFC 1918 and unique local,
 * link-local (169.254.169.254, the cloud metadata service, among them), carrier-grade NAT,
 * unspecified, multicast and reserved ranges are refused, and an IPv6 address that carries an
 * IPv4 address (`::ffff:10.0.0.1`, `::127.0.0.1`, NAT64, 6to4, Teredo, ISATAP: embeddedIPv4) is
 * judged by that address. Checked when an endpoint is saved and
 * again before each delivery, which then connects to the address it checked (see
 * src/webhooks/sender.ts), so a DNS answer that changes in between cannot redirect it.
 * `insecure` (WEBHOOKS_ALLOW_INSECURE, for local development) allows http and the addresses a
 * developer's own receiver has (loopback, private, carrier-grade NAT as VPNs use), and nothing
 * else: link-local stays refused, since the cloud metadata service lives there and no local
 * receiver does.
 */
export async function vetUrl(
  text: string,
  options: { insecure: boolean; resolve: Resolve },
): Promise<VettedUrl> {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new UrlRefused('is not an absolute URL')
  }
  if (url.protocol !== 'https:' && !(options.insecure && url.protocol === 'http:')) {
    throw new UrlRefused(
      options.insecure || url.protocol !== 'http:'
        ? 'must use https'
        : 'must use https (http is allowed only when WEBHOOKS_ALLOW_INSECURE=true, for local development)',
    )
  }
  if (url.username !== '' || url.password !== '')
    throw new UrlRefused('must not carry a user name or password')
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  let addresses: ResolvedAddress[]
  if (ipaddr.isValid(host)) {
    addresses = [{ address: host, family: ipaddr.parse(host).kind() === 'ipv6' ? 6 : 4 }]
  } else {
    try {
      addresses = await options.resolve(host)
    } catch {
      throw new UrlRefused(`names a host that does not resolve (${host})`)
    }
    if (addresses.length === 0) throw new UrlRefused(`names a host that does not resolve (${host})`)
  }
  for (const { address } of addresses) {
    const range = publicRange(address)
    if (range === 'unicast' || (options.insecure && LOCAL_DEVELOPMENT_RANGES.has(range))) continue
    const what = `${RANGE_NAMES[range] ?? `a non-public address (${range})`} ${address}`
    throw new UrlRefused(
      options.insecure
        ? `resolves to ${what}, refused even when WEBHOOKS_ALLOW_INSECURE=true`
        : `resolves to ${what}`,
    )
  }
  return { url, addresses }
}

/** ipaddr.js ranges of IPv6 forms that carry an IPv4 address: judged by that address instead. */
const EMBEDDING_RANGES = new Set(['ipv4Mapped', 'rfc6145', 'rfc6052', '6to4', 'teredo'])

/**
 * The ipaddr.js range an address is judged by. An IPv6 address that carries IPv4 addresses (see
 * embeddedIPv4) is judged by them: the first of them that is not public decides, and it is public
 * only when all of them are. Loopback `::1`, unspecified `::` and the other special IPv6 ranges
 * are judged as themselves first (`::1` would otherwise read as 0.0.0.1).
 */
function publicRange(address: string): string {
  const parsed = ipaddr.parse(address)
  if (parsed.kind() === 'ipv4') return parsed.range()
  const v6 = parsed as ipaddr.IPv6
  const own = v6.range()
  if (own !== 'unicast' && !EMBEDDING_RANGES.has(own)) return own
  for (const v4 of embeddedIPv4(v6)) {
    const range = v4.range()
    if (range !== 'unicast') return range
  }
  return EMBEDDING_RANGES.has(own) ? 'unicast' : own
}

/** The address as one 128-bit number. */
function bitsOf(address: ipaddr.IPv6): bigint {
  return address.parts.reduce((bits, part) => (bits << 16n) | BigInt(part), 0n)
}

/** The 32 bits from bit `at` of the address, as an IPv4 address. */
function ipv4At(bits: bigint, at: number): ipaddr.IPv4 {
  const value = Number((bits >> BigInt(96 - at)) & 0xffffffffn)
  return new ipaddr.IPv4([value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff])
}

/**
 * The IPv4 addresses an IPv6 address carries, in every form a host or a translator on the way
 * may act on: IPv4-mapped `::ffff:0:0/96` and IPv4-translated `::ffff:0:0:0/96` (RFC 6145),
 * IPv4-compatible `::/96` (RFC 4291 §2.5.5.1, deprecated but still routed by some stacks), NAT64's
 * well-known `64:ff9b::/96` (RFC 6052) and local-use `64:ff9b:1::/48` (RFC 8215), 6to4
 * `2002::/16` (RFC 3056), Teredo `2001::/32` (RFC 4380: its server, and its client stored
 * inverted) and an ISATAP interface identifier `…:0:5efe:a.b.c.d` under any prefix (RFC 5214).
 */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] {
  const p = address.parts
  const bits = bitsOf(address)
  const zeroes = (from: number, to: number) => p.slice(from, to).every((part) => part === 0)
  const last = ipv4At(bits, 96)
  const found: ipaddr.IPv4[] = []
  if (zeroes(0, 5) && (p[5] === 0 || p[5] === 0xffff)) found.push(last)
  if (zeroes(0, 4) && p[4] === 0xffff && p[5] === 0) found.push(last)
  if (p[0] === 0x64 && p[1] === 0xff9b && zeroes(2, 6)) found.push(last)
  if (p[0] === 0x64 && p[1] === 0xff9b && p[2] === 1) found.push(...localNat64Embedded(bits))
  if (p[0] === 0x2002) found.push(ipv4At(bits, 16))
  if (p[0] === 0x2001 && p[1] === 0) {
    found.push(ipv4At(bits, 32), new ipaddr.IPv4(last.toByteArray().map((byte) => byte ^ 0xff)))
  }
  if (((p[4] ?? 0) & 0xfcff) === 0 && p[5] === 0x5efe) found.push(last)
  return found
}

/**
 * In the local-use NAT64 prefix each network chooses the prefix length (/48 to /96), so the
 * address is read at every RFC 6052 position (§2.2: the 32 bits after the prefix, skipping the
 * reserved bits 64–71). The positions whose reserved and trailing bits are zero, as a translator
 * writes them, come first: a refusal then names the address most likely meant.
 */
function localNat64Embedded(bits: bigint): ipaddr.IPv4[] {
  const zeroFrom = (bit: number) => (bits & ((1n << BigInt(128 - bit)) - 1n)) === 0n
  const positions = [48, 56, 64].map((length) => {
    const high = ipv4At(bits, length).toByteArray()
    const low = ipv4At(bits, length + 8).toByteArray()
    const before = (64 - length) / 8
    const v4 = new ipaddr.IPv4([...high.slice(0, before), ...low.slice(before, 4)])
    const reservedZero = ((bits >> 56n) & 0xffn) === 0n
    return { v4, written: reservedZero && zeroFrom(length + 40) }
  })
  return [
    ...positions.filter((p) => p.written).map((p) => p.v4),
    ipv4At(bits, 96),
    ...positions.filter((p) => !p.written).map((p) => p.v4),
  ]
}
