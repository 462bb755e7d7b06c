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
 * unspecified, multicast and reserved ranges are refused, IPv4-mapped IPv6 forms
 * (`::ffff:10.0.0.1`) by the IPv4 address they carry. Checked when an endpoint is saved and
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

/** The ipaddr.js range of an address, IPv4-mapped IPv6 judged as the IPv4 address it maps. */
function publicRange(address: string): string {
  // ipaddr.process turns ::ffff:a.b.c.d into a.b.c.d.
  const parsed = ipaddr.process(address)
  return parsed.range()
}
