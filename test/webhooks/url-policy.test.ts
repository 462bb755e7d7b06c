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
})
