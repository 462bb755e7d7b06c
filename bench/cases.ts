import type { Request } from 'autocannon'

/**
 * The requests of each case. Ids are drawn at random so that reads, updates and list pages
 * touch the whole table, not one hot row.
 */

const randomInt = (min: number, max: number): number => min + Math.floor(Math.random() * (max - min + 1))
const anyOf = (ids: readonly number[]): number => ids[randomInt(0, ids.length - 1)]!

export const CREATE_BODY = 'name=Rex&species=dog&breed=Beagle'

/** POST /v1/pet, form body, API key as the Basic user name. */
export function createRequests(authorization: string, path = '/v1/pet'): Request[] {
  return [
    {
      method: 'POST',
      path,
      headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
      body: CREATE_BODY,
    },
  ]
}

/**
 * createRequests with a new Idempotency-Key on every request, as the client libraries send
 * every create: the key's claim and the stored response come on top of the create.
 */
export function keyedCreateRequests(authorization: string): Request[] {
  const run = `${process.pid}-${Date.now()}`
  let n = 0
  return createRequests(authorization).map((request) => ({
    ...request,
    setupRequest: (r) => ({ ...r, headers: { ...r.headers, 'idempotency-key': `bench-${run}-${++n}` } }),
  }))
}

/** GET /v2/pet/{id} with a bearer token, any of the pets' ids (bench/pet-ids.ts). */
export function readRequests(authorization: string, ids: readonly number[]): Request[] {
  return [
    {
      method: 'GET',
      headers: { authorization },
      setupRequest: (request) => ({ ...request, path: `/v2/pet/${anyOf(ids)}` }),
    },
  ]
}

/**
 * PUT /v2/pet with a bearer token: a new name each time, so every request really writes
 * (an update that changes nothing would be answered without touching the database).
 */
export function updateRequests(authorization: string, ids: readonly number[]): Request[] {
  let n = 0
  return [
    {
      method: 'PUT',
      path: '/v2/pet',
      headers: { authorization, 'content-type': 'application/json' },
      setupRequest: (request) => ({
        ...request,
        body: JSON.stringify({
          id: anyOf(ids),
          name: `Rex ${++n}`,
          photoUrls: [],
          status: 'available',
        }),
      }),
    },
  ]
}

/** GET /v1/pet?limit=10&starting_after=… with the cursor deep in the table (older half). */
export function listRequests(authorization: string, ids: readonly number[]): Request[] {
  // Ascending ids: the older half is the first half, and a cursor there has pages behind it.
  const low = Math.min(ids.length - 1, Math.max(12, Math.floor(ids.length * 0.1)))
  const high = Math.max(low, Math.floor(ids.length * 0.5))
  return [
    {
      method: 'GET',
      headers: { authorization },
      setupRequest: (request) => ({
        ...request,
        path: `/v1/pet?limit=10&starting_after=${ids[randomInt(low, high)]}`,
      }),
    },
  ]
}
