import { describe, expect, it } from 'vitest'
import { shareClaims } from '../../src/webhooks/fair-share.ts'
import type { EndpointDue } from '../../src/webhooks/webhooks-repository.ts'

const NOW = '2026-11-25T12:00:00.000Z'
const due = (endpointId: string, accountId: string, dueAt: string | null = '2026-11-25T11:00:00.000Z') =>
  ({ endpointId, accountId, dueAt }) satisfies EndpointDue
const state = (
  room: number,
  busy: { endpoints?: [string, number][]; accounts?: [string, number][] } = {},
) => ({
  room,
  perEndpoint: 4,
  perAccount: 8,
  busyEndpoints: new Map(busy.endpoints ?? []),
  busyAccounts: new Map(busy.accounts ?? []),
})

describe('sharing the claim between accounts and endpoints', () => {
  it('deals the room one delivery at a time, account by account, whoever has waited longer', () => {
    const claims = shareClaims(
      [
        due('a1', 'A', '2026-11-25T10:00:00.000Z'),
        due('a2', 'A', '2026-11-25T10:00:00.000Z'),
        due('b1', 'B'),
      ],
      NOW,
      state(3),
    )
    expect(Object.fromEntries(claims)).toEqual({ a1: 1, a2: 1, b1: 1 })
  })

  it('gives a place first to an account with nothing in flight', () => {
    const claims = shareClaims(
      [due('a1', 'A', '2026-11-25T10:00:00.000Z'), due('b1', 'B')],
      NOW,
      state(1, { endpoints: [['a1', 1]], accounts: [['A', 1]] }),
    )
    expect(Object.fromEntries(claims)).toEqual({ b1: 1 })
  })

  it('never passes the bound of an endpoint or of an account, nor the room', () => {
    const endpoints = Array.from({ length: 16 }, (_, i) => due(`a${i}`, 'A'))
    const alone = shareClaims(endpoints, NOW, state(32))
    expect([...alone.values()].reduce((a, b) => a + b, 0)).toBe(8)
    expect(Object.fromEntries(shareClaims([due('b1', 'B')], NOW, state(32)))).toEqual({ b1: 4 })
    const full = shareClaims(endpoints, NOW, state(32, { accounts: [['A', 8]] }))
    expect(full.size).toBe(0)
    expect(Object.fromEntries(shareClaims([due('b1', 'B'), due('c1', 'C')], NOW, state(1)))).toHaveProperty(
      'b1',
    )
  })

  it('leaves out endpoints with nothing due yet, and disabled ones', () => {
    const claims = shareClaims(
      [due('later', 'A', '2026-11-25T13:00:00.000Z'), due('disabled', 'A', null), due('b1', 'B')],
      NOW,
      state(8),
    )
    expect(Object.fromEntries(claims)).toEqual({ b1: 4 })
  })
})
