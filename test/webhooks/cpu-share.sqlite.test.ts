import { describe, expect, it } from 'vitest'
import { CpuShare, SATURATED_GRACE_MS, SATURATED_SHARE } from '../../src/webhooks/cpu-share.ts'

/** A CpuShare on a clock and a loop the test drives, one window at a time. */
function driven(windowMs: number) {
  let now = 0
  let received = 0
  let busy = 0
  const share = new CpuShare({ windowMs, requests: () => received, utilization: () => busy, now: () => now })
  return {
    share,
    /** Ends the window with the loop this busy, `requests` received and `deliveries` done during it. */
    window(options: { busy: number; requests: number; deliveries?: number }) {
      share.take(options.deliveries ?? 0)
      for (let i = 0; i < (options.deliveries ?? 0); i++) share.done()
      now += windowMs
      busy = options.busy
      received += options.requests
      return share.available()
    },
  }
}

const SATURATED = { busy: 0.95, requests: 500 }

describe('the share of the process the webhooks worker takes', () => {
  it('keeps SATURATED_SHARE of each window for deliveries once requests have saturated the loop for SATURATED_GRACE_MS, at the cost measured while no requests came', () => {
    const { share, window } = driven(100)
    // The worker alone: 50 deliveries a window keep the loop 15 % busy, 0.3 ms each.
    for (let i = 0; i < 40; i++) window({ busy: 0.15, requests: 0, deliveries: 50 })
    const burst = window(SATURATED)
    expect(share.saturated()).toBe(true)
    // A burst of requests: deliveries wait, a trickle at most.
    expect(burst).toBe(2)
    for (let waited = 100; waited < SATURATED_GRACE_MS - 100; waited += 100) {
      // A window a little less busy now and then (other processes on the machine) is no respite.
      expect(window(waited % 1000 === 0 ? { busy: 0.7, requests: 500 } : SATURATED)).toBe(2)
    }
    // No burst any more: the share, for as long as the requests keep the loop saturated.
    const lasting = window(SATURATED)
    expect(lasting).toBe(Math.floor((SATURATED_SHARE * 100) / 0.3))
    for (let i = 0; i < 20; i++) expect(window({ ...SATURATED, deliveries: lasting })).toBe(lasting)
  })

  it('goes at full speed while no requests arrive, and grows back gradually once the load eases', () => {
    const { share, window } = driven(100)
    expect(window({ busy: 0.1, requests: 0 })).toBe(2000)
    expect(window(SATURATED)).toBe(2)
    const eased = window({ busy: 0.3, requests: 100 })
    expect(eased).toBeGreaterThan(2)
    expect(eased).toBeLessThan(2000)
    expect(share.saturated()).toBe(false)
    // The grace starts again with the next saturation.
    expect(window(SATURATED)).toBe(2)
  })
})
