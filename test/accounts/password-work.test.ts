import { describe, expect, it } from 'vitest'
import { PasswordWorkBusyError, PasswordWorkQueue } from '../../src/accounts/password-work.ts'

/** Work that finishes when told to, recording when it started. */
function gate(started: string[], name: string) {
  let open: () => void = () => {}
  const done = new Promise<void>((resolve) => {
    open = resolve
  })
  return {
    work: async () => {
      started.push(name)
      await done
      return name
    },
    open: () => open(),
  }
}

const tick = () => new Promise((resolve) => setImmediate(resolve))

describe('password work queue', () => {
  it('serves the waiting party served longest ago first, so a flood waits behind its own queue', async () => {
    const queue = new PasswordWorkQueue({ concurrency: 1, perParty: 10 })
    const started: string[] = []
    const flood = [1, 2, 3, 4].map((i) => gate(started, `a${i}`))
    const other = gate(started, 'b1')
    const results = flood.map((g) => queue.run({ account: 'a' }, g.work))
    const otherResult = queue.run({ address: '10.0.0.1' }, other.work)
    await tick()
    expect(started).toEqual(['a1'])
    flood[0]!.open()
    await tick()
    expect(started).toEqual(['a1', 'b1'])
    other.open()
    expect(await otherResult).toBe('b1')
    expect(queue.load({ account: 'a' })).toBe(3)
    for (const g of flood) g.open()
    expect(await Promise.all(results)).toEqual(['a1', 'a2', 'a3', 'a4'])
    expect(queue.load()).toBe(0)
  })

  it('refuses a party past its bound of running plus waiting work, and no one else', async () => {
    const queue = new PasswordWorkQueue({ concurrency: 2, perParty: 3 })
    const started: string[] = []
    const gates = [1, 2, 3].map((i) => gate(started, `a${i}`))
    const accepted = gates.map((g) => queue.run({ account: 'a' }, g.work))
    const refused = queue.run({ account: 'a' }, async () => 'a4')
    await expect(refused).rejects.toBeInstanceOf(PasswordWorkBusyError)
    await expect(refused).rejects.toMatchObject({ retryAfterSeconds: expect.any(Number) })
    const other = gate(started, 'b1')
    const otherResult = queue.run({ account: 'b' }, other.work)
    for (const g of [...gates, other]) g.open()
    expect(await Promise.all([...accepted, otherResult])).toEqual(['a1', 'a2', 'a3', 'b1'])
    // Once its work is done the party may hash again.
    expect(await queue.run({ account: 'a' }, async () => 'a5')).toBe('a5')
  })

  it('frees the slot of work that fails', async () => {
    const queue = new PasswordWorkQueue({ concurrency: 1, perParty: 1 })
    await expect(queue.run({ account: 'a' }, async () => Promise.reject(new Error('boom')))).rejects.toThrow(
      'boom',
    )
    expect(await queue.run({ account: 'a' }, async () => 'ok')).toBe('ok')
    expect(queue.load()).toBe(0)
  })
})
