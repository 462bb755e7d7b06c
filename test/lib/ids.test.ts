import { describe, expect, it } from 'vitest'
import { newTimeOrderedId } from '../../src/lib/ids.ts'

describe('time-ordered ids (events)', () => {
  it('sort by the time they were made, whatever their random part', () => {
    const times = [0, 1, 61, 62, 3843, 1_700_000_000_000, 1_700_000_000_001, 1_800_000_000_000]
    const ids = times.map((t) => newTimeOrderedId('evt', t))
    expect([...ids].sort()).toEqual(ids)
  })

  it('keep the public shape: prefix and 20 base62 characters, 12 of them random', () => {
    const ids = Array.from({ length: 1000 }, () => newTimeOrderedId('evt', 1_800_000_000_000))
    for (const id of ids) expect(id).toMatch(/^evt_[0-9A-Za-z]{20}$/)
    expect(new Set(ids).size).toBe(ids.length)
    expect(new Set(ids.map((id) => id.slice(0, 12))).size).toBe(1)
  })
})
