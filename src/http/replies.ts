import { ApiError } from '../errors/api-error.ts'

/** Form fields arrive as text: an empty optional field means "none" (and clears it on update). */
export function emptyToNull<T extends string | null | undefined>(value: T): T | null {
  return value === '' ? null : value
}

export function assertOneCursor(startingAfter: unknown, endingBefore: unknown): void {
  if (startingAfter !== undefined && endingBefore !== undefined) {
    throw new ApiError('invalid_request', 'Send starting_after or ending_before, not both.', {
      param: 'ending_before',
    })
  }
}
