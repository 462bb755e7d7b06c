import { describe, expect, it } from 'vitest'
import { ApiError } from '../../src/errors/api-error.ts'
import { MAX_WRITE_ATTEMPTS, writeAtCurrentVersion } from '../../src/lib/optimistic.ts'

/** A row whose version another writer moves `losses` times just before each of our writes. */
function contendedRow(losses: number) {
  const row = { version: 1, value: '' }
  let lost = 0
  return {
    row,
    load: async () => ({ ...row }),
    write: async (current: { version: number }) => {
      if (lost < losses) {
        lost++
        row.version++ // another writer got there first
        return undefined
      }
      if (current.version !== row.version) return undefined
      row.version++
      return { ...row }
    },
  }
}

const missing = () => new ApiError('pet_not_found', 'gone')

describe('writeAtCurrentVersion', () => {
  it('retries a write without If-Match past five lost races instead of answering 412', async () => {
    const contended = contendedRow(MAX_WRITE_ATTEMPTS - 1)
    const result = await writeAtCurrentVersion({ ...contended, missing, ifMatch: undefined })
    expect(result.version).toBe(contended.row.version)
  })

  it('answers 409 concurrent_change, never 412, when a write without If-Match loses every time', async () => {
    const contended = contendedRow(Number.POSITIVE_INFINITY)
    const error = await writeAtCurrentVersion({ ...contended, missing, ifMatch: undefined }).catch((e) => e)
    expect(error).toBeInstanceOf(ApiError)
    expect(error.code).toBe('concurrent_change')
    expect(error.status).toBe(409)
  })

  it('treats If-Match: * like no If-Match', async () => {
    const contended = contendedRow(Number.POSITIVE_INFINITY)
    const error = await writeAtCurrentVersion({ ...contended, missing, ifMatch: { any: true } }).catch(
      (e) => e,
    )
    expect(error.code).toBe('concurrent_change')
  })

  it('answers 412 at once when the If-Match version was overtaken', async () => {
    const contended = contendedRow(1)
    const error = await writeAtCurrentVersion({
      ...contended,
      missing,
      ifMatch: { any: false, versions: [1] },
    }).catch((e) => e)
    expect(error.code).toBe('precondition_failed')
  })
})
