import { describe, expect, it } from 'vitest'
import { relative, when } from '../../src/dashboard/views/layout.ts'

const NOW = Date.parse('2025-06-15T12:00:00.000Z')
const DAY = 86_400_000

describe('dashboard times', () => {
  it('says how long ago or how soon, in the largest whole unit', () => {
    expect(relative(NOW - 20_000, NOW)).toBe('just now')
    expect(relative(NOW + 20_000, NOW)).toBe('in a moment')
    expect(relative(NOW - 3 * 60_000, NOW)).toBe('3 minutes ago')
    expect(relative(NOW - 60 * 60_000, NOW)).toBe('1 hour ago')
    expect(relative(NOW + 7 * DAY - 500, NOW)).toBe('in 7 days')
    expect(relative(NOW - 65 * DAY, NOW)).toBe('2 months ago')
    expect(relative(NOW - 800 * DAY, NOW)).toBe('2 years ago')
  })

  it('shows the real time in UTC, to the second, beside the relative time', () => {
    const shown = when('2025-01-05T14:03:27.123Z').value
    expect(shown).toContain('datetime="2025-01-05T14:03:27.123Z"')
    expect(shown).toMatch(
      />2025-01-05 14:03:27\u00a0UTC <span class="ago">\(\d+ (month|year)s? ago\)<\/span><\/time>$/,
    )
  })

  it('says "Never" for no time, and for one that is not a time', () => {
    expect(when(null).value).toContain('Never')
    expect(when('').value).toContain('Never')
  })
})
