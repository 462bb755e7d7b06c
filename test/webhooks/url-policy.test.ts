import ipaddr from 'ipaddr.js'
import { describe, expect, it } from 'vitest'
import { type Resolve, UrlRefused, vetUrl } from '../../src/webhooks/url-policy.ts'

/** A DNS of our own: public and private names, without asking the network. */
const resolve: Resolve = async (host) => {
  const table: Record<string, string[]> = {
    'hooks.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    'internal.example.com': ['10.0.0.5'],
    'mixed.example.com': ['93.184.215.14', '192.168.1.20'],
    'metadata.example.com': ['169.254.169.254'],
  }
  const found = table[host]
  if (found === undefined) throw new Error('ENOTFOUND')
  return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
}

async function refusal(url: string, insecure = false): Promise<string> {
  try {
    await vetUrl(url, { insecure, resolve })
  } catch (error) {
    if (error instanceof UrlRefused) return error.reason
    throw error
  }
  return 'accepted'
}

describe('webhook URL policy (SSRF)', () => {
  it('accepts https to a host whose every address is public, and returns those addresses', async () => {
    const vetted = await vetUrl('https://hooks.example.com/stripe', { insecure: false, resolve })
    expect(vetted.addresses.map((a) => a.address)).toEqual([
      '93.184.215.14',
      '2606:2800:21f:cb07:6820:80da:af6b:8b2c',
    ])
  })

  it.each([
    [
      'http://hooks.example.com/',
      'must use https (http is allowed only when WEBHOOKS_ALLOW_INSECURE=true, for local development)',
    ],
    ['ftp://hooks.example.com/', 'must use https'],
    ['not a url', 'is not an absolute URL'],
    ['https://user:pw@hooks.example.com/', 'must not carry a user name or password'],
    ['https://nowhere.example.com/', 'names a host that does not resolve (nowhere.example.com)'],
    ['https://internal.example.com/', 'resolves to a private address 10.0.0.5'],
    ['https://mixed.example.com/', 'resolves to a private address 192.168.1.20'],
    ['https://metadata.example.com/', 'resolves to a link-local address 169.254.169.254'],
    ['https://169.254.169.254/latest/meta-data/', 'resolves to a link-local address 169.254.169.254'],
    ['https://127.0.0.1:8443/', 'resolves to a loopback address 127.0.0.1'],
    ['https://[::1]/', 'resolves to a loopback address ::1'],
    ['https://172.16.3.4/', 'resolves to a private address 172.16.3.4'],
    ['https://[fd12:3456::1]/', 'resolves to a private (unique local) address fd12:3456::1'],
    ['https://[fe80::1]/', 'resolves to a link-local address fe80::1'],
    ['https://100.64.0.7/', 'resolves to a carrier-grade NAT address 100.64.0.7'],
    ['https://0.0.0.0/', 'resolves to an unspecified address 0.0.0.0'],
    ['https://[::]/', 'resolves to an unspecified address ::'],
    ['https://224.0.0.1/', 'resolves to a multicast address 224.0.0.1'],
    ['https://[::ffff:127.0.0.1]/', 'resolves to a loopback address ::ffff:7f00:1'],
    ['https://[::ffff:10.1.2.3]/', 'resolves to a private address ::ffff:a01:203'],
    ['https://2130706433/', 'resolves to a loopback address 127.0.0.1'],
  ])('refuses %s: it %s', async (url, reason) => {
    expect(await refusal(url)).toBe(reason)
  })

  it('allows http and loopback or private targets in insecure mode (local development)', async () => {
    expect(await refusal('http://127.0.0.1:3000/hook', true)).toBe('accepted')
    expect(await refusal('http://internal.example.com/', true)).toBe('accepted')
    expect(await refusal('http://100.64.0.7/', true)).toBe('accepted')
    expect(await refusal('http://[fd12:3456::1]/', true)).toBe('accepted')
    expect(await refusal('ftp://hooks.example.com/', true)).toBe('must use https')
  })

  it.each([
    ['http://169.254.169.254/latest/meta-data/', 'a link-local address 169.254.169.254'],
    ['http://metadata.example.com/', 'a link-local address 169.254.169.254'],
    ['http://[fe80::1]/', 'a link-local address fe80::1'],
    ['http://0.0.0.0:3000/', 'an unspecified address 0.0.0.0'],
    ['http://224.0.0.1/', 'a multicast address 224.0.0.1'],
  ])('still refuses %s in insecure mode: it resolves to %s', async (url, what) => {
    expect(await refusal(url, true)).toBe(
      `resolves to ${what}, refused even when WEBHOOKS_ALLOW_INSECURE=true`,
    )
  })

  /** Each form of IPv6 that carries an IPv4 address: the address, as 32 bits placed in it. */
  const FORMS: [string, (v4: number) => bigint][] = [
    ['IPv4-mapped ::ffff:0:0/96', (v4) => (0xffffn << 32n) | BigInt(v4)],
    ['IPv4-compatible ::/96', (v4) => BigInt(v4)],
    ['IPv4-translated ::ffff:0:0:0/96', (v4) => (0xffffn << 48n) | BigInt(v4)],
    ['NAT64 64:ff9b::/96', (v4) => (0x64ff9bn << 96n) | BigInt(v4)],
    ['NAT64 local-use 64:ff9b:1::/48, as /96', (v4) => (0x64ff9b0001n << 80n) | BigInt(v4)],
    [
      'NAT64 local-use 64:ff9b:1::/48, as /48',
      // RFC 6052 §2.2: 16 bits after the prefix, the reserved octet (64–71), then the other 16.
      (v4) => (0x64ff9b0001n << 80n) | (BigInt(v4 >>> 16) << 64n) | (BigInt(v4 & 0xffff) << 40n),
    ],
    ['6to4 2002::/16', (v4) => (0x2002n << 112n) | (BigInt(v4) << 80n) | 1n],
    [
      'Teredo 2001::/32, as its server',
      (v4) => (0x20010000n << 96n) | (BigInt(v4) << 64n) | (0x800063bfn << 32n) | 0xf7f7f7f7n,
    ],
    [
      'Teredo 2001::/32, as its client (inverted)',
      (v4) => (0x20010000n << 96n) | (0x5db8d70en << 64n) | (0x800063bfn << 32n) | BigInt(~v4 >>> 0),
    ],
    ['ISATAP under a global prefix', (v4) => (0x26062800021fcb07n << 64n) | (0x5efen << 32n) | BigInt(v4)],
    [
      'ISATAP (u bit) under a global prefix',
      (v4) => (0x26062800021fcb07n << 64n) | (0x2000000_5efen << 32n) | BigInt(v4),
    ],
  ]

  const ipv4 = (text: string) =>
    ipaddr.IPv4.parse(text)
      .toByteArray()
      .reduce((n, byte) => n * 256 + byte, 0)
  const parts = (bits: bigint) =>
    Array.from({ length: 8 }, (_, i) => Number((bits >> BigInt(112 - 16 * i)) & 0xffffn))

  /** The spellings the URL parser accepts for one address: compressed, in full, in capitals, with a dotted tail. */
  function spellings(bits: bigint): string[] {
    const p = parts(bits)
    const hex = p.map((part) => part.toString(16))
    const tail = (Number(bits & 0xffffffffn) >>> 0).toString(16).padStart(8, '0')
    const dotted = [0, 2, 4, 6].map((i) => Number.parseInt(tail.slice(i, i + 2), 16)).join('.')
    return [
      new ipaddr.IPv6(p).toString(),
      p.map((part) => part.toString(16).padStart(4, '0')).join(':'),
      hex.join(':').toUpperCase(),
      `${hex.slice(0, 6).join(':')}:${dotted}`,
    ]
  }

  const NOT_PUBLIC: [string, string][] = [
    ['127.0.0.1', 'a loopback address'],
    ['10.1.2.3', 'a private address'],
    ['169.254.169.254', 'a link-local address'],
    ['100.64.0.7', 'a carrier-grade NAT address'],
  ]

  describe.each(FORMS)('an IPv6 address of the form %s', (_form, place) => {
    it.each(NOT_PUBLIC)(
      'is refused when it carries %s, in every spelling, as a URL or a DNS answer',
      async (v4, what) => {
        for (const spelling of spellings(place(ipv4(v4)))) {
          const url = `https://[${spelling}]/hook`
          const shown = new URL(url).hostname.slice(1, -1)
          expect(await refusal(url), url).toBe(`resolves to ${what} ${shown}`)
          const answer: Resolve = async () => [{ address: spelling, family: 6 }]
          await expect(
            vetUrl('https://aaaa.example.com/', { insecure: false, resolve: answer }),
            spelling,
          ).rejects.toThrow(`resolves to ${what} ${spelling}`)
        }
      },
    )
  })

  it.each([
    [
      'https://[64:ff9b::93.184.215.14]/',
      'NAT64 of a public address (what DNS64 answers on an IPv6-only network)',
    ],
    ['https://[2002:5db8:d70e::1]/', '6to4 of a public address'],
    ['https://[2001:0:5db8:d70e:8000:63bf:f7f7:f7f7]/', 'Teredo with a public server and client'],
    ['https://[::ffff:93.184.215.14]/', 'IPv4-mapped public address'],
  ])('accepts %s: %s', async (url) => {
    expect(await refusal(url)).toBe('accepted')
  })

  it('refuses a local-use NAT64 address that is public at one RFC 6052 position and private at another', async () => {
    // 10.0.0.1 where a /48 translator reads it, 93.184.215.14 where a /96 one does.
    expect(await refusal('https://[64:ff9b:1:a00:0:100:5db8:d70e]/')).toBe(
      'resolves to a private address 64:ff9b:1:a00:0:100:5db8:d70e',
    )
  })
})
