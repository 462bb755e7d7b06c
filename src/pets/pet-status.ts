import { ApiError } from '../errors/api-error.ts'

/** The Petstore's statuses. A new pet is `available`. */
export const PET_STATUSES = ['available', 'pending', 'sold'] as const
export type PetStatus = (typeof PET_STATUSES)[number]

// available⇄pending, available→sold, pending→sold; sold is final.
const NEXT: Record<PetStatus, readonly PetStatus[]> = {
  available: ['pending', 'sold'],
  pending: ['available', 'sold'],
  sold: [],
}

/** Throws 409 unless `from → to` is allowed; staying in the same status is always allowed. */
export function assertTransition(from: PetStatus, to: PetStatus): void {
  if (from === to || NEXT[from].includes(to)) return
  const allowed = NEXT[from]
  throw new ApiError(
    'invalid_status_transition',
    allowed.length === 0
      ? `This pet is ${from}, which is final: its status cannot change to ${to}.`
      : `A ${from} pet can move to ${allowed.join(' or ')}, not to ${to}.`,
    { param: 'status', extensions: { current_status: from, allowed_transitions: allowed } },
  )
}
