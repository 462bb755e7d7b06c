import type { EndpointDue } from './webhooks-repository.ts'

export interface SharingState {
  /** Deliveries this instance may start now, all endpoints together. */
  room: number
  perEndpoint: number
  perAccount: number
  /** Deliveries in flight here, by endpoint id and by account id. */
  busyEndpoints: ReadonlyMap<string, number>
  busyAccounts: ReadonlyMap<string, number>
}

/**
 * How many due deliveries to claim from each endpoint, so that no account's backlog stands in
 * front of another's: the room is dealt one delivery at a time, account by account (those with
 * the fewest in flight here first, then the longest waiting), and within an account endpoint by
 * endpoint, never past an endpoint's or an account's bound. An account whose endpoints are slow
 * or dead holds at most `perAccount` of the instance's sends, and a free place goes first to an
 * account that has none.
 */
export function shareClaims(
  due: readonly EndpointDue[],
  now: string,
  state: SharingState,
): Map<string, number> {
  const byAccount = new Map<string, { endpoints: EndpointDue[]; oldest: string; next: number }>()
  for (const endpoint of due) {
    if (endpoint.dueAt === null || endpoint.dueAt > now) continue
    const account = byAccount.get(endpoint.accountId)
    if (account === undefined) {
      byAccount.set(endpoint.accountId, { endpoints: [endpoint], oldest: endpoint.dueAt, next: 0 })
    } else {
      account.endpoints.push(endpoint)
      if (endpoint.dueAt < account.oldest) account.oldest = endpoint.dueAt
    }
  }
  const busy = (map: ReadonlyMap<string, number>, id: string) => map.get(id) ?? 0
  const earlier = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
  const order = [...byAccount.entries()].sort(
    ([a, x], [b, y]) =>
      busy(state.busyAccounts, a) - busy(state.busyAccounts, b) || earlier(x.oldest, y.oldest),
  )
  for (const [, account] of order) account.endpoints.sort((a, b) => earlier(a.dueAt!, b.dueAt!))

  const claims = new Map<string, number>()
  const given = new Map<string, number>()
  let room = state.room
  let dealt = true
  while (room > 0 && dealt) {
    dealt = false
    for (const [accountId, account] of order) {
      if (room === 0) break
      if (busy(state.busyAccounts, accountId) + busy(given, accountId) >= state.perAccount) continue
      // The account's endpoints in turn, starting after the last one served.
      for (let tried = 0; tried < account.endpoints.length; tried++) {
        const endpoint = account.endpoints[(account.next + tried) % account.endpoints.length]!
        const taken = busy(state.busyEndpoints, endpoint.endpointId) + busy(claims, endpoint.endpointId)
        if (taken >= state.perEndpoint) continue
        claims.set(endpoint.endpointId, busy(claims, endpoint.endpointId) + 1)
        given.set(accountId, busy(given, accountId) + 1)
        account.next = (account.next + tried + 1) % account.endpoints.length
        room--
        dealt = true
        break
      }
    }
  }
  return claims
}
