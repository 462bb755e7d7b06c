import type { AddressInfo } from 'node:net'
import { beforeAll, expect, it } from 'vitest'
import { MAX_LISTED_ERRORS } from '../../src/errors/validation-errors.ts'
import { useTestApp } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { accessToken, bearer, newClient } from '../helpers/oauth.ts'

/** `{"name":"x","photoUrls":[1,1,…]}`: every item is the wrong type. */
function photoUrlsOfNumbers(items: number, extra = ''): string {
  return `{${extra}"name":"x","photoUrls":[${Array(items).fill('1').join(',')}]}`
}

/** An object with `count` distinct unknown members, each a field error of its own. */
function unknownMembers(count: number, known: string): string {
  const members = Array.from({ length: count }, (_, i) => `"p${i}":0`).join(',')
  return `{${known}${members}}`
}

interface Problem {
  status: number
  code: string
  detail: string
  errors?: { param: string; message: string }[]
  errors_omitted?: number
}

describeDb('validation errors stay bounded and linear in the size of the request', () => {
  let base: string
  let token: string
  let apiKey: string

  const t = useTestApp()
  beforeAll(async () => {
    const client = await newClient(t)
    token = await accessToken(t.app, client)
    apiKey = client.apiKey
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
  })

  /** Sends `body` over HTTP while /healthz is polled; both must answer within a generous bound. */
  async function sendWhileProbing(method: string, path: string, body: string, authorization: string) {
    const started = Date.now()
    const big = fetch(`${base}${path}`, {
      method,
      body,
      headers: { authorization, 'content-type': 'application/json' },
    }).then(async (res) => ({ status: res.status, text: await res.text(), ms: Date.now() - started }))
    // Let the large body reach the server before the probe.
    await new Promise((resolve) => setTimeout(resolve, 20))
    const probeStarted = Date.now()
    const health = await fetch(`${base}/healthz`)
    const probeMs = Date.now() - probeStarted
    const answer = await big
    expect(health.status).toBe(200)
    return { ...answer, probeMs }
  }

  function expectBounded(problem: Problem, total: number) {
    expect(problem.errors?.length).toBe(MAX_LISTED_ERRORS)
    expect(problem.errors_omitted).toBe(total - MAX_LISTED_ERRORS)
    expect(problem.detail).toContain(`and ${(total - MAX_LISTED_ERRORS).toLocaleString('en-US')} more`)
  }

  it('answers POST /v2/pet with 80,000 wrong photoUrls quickly, with a bounded list, and /healthz meanwhile', async () => {
    const body = photoUrlsOfNumbers(80_000)
    expect(body.length).toBeGreaterThan(160_000)
    const res = await sendWhileProbing('POST', '/v2/pet', body, bearer(token).authorization!)
    expect(res.status).toBe(422)
    expect(res.text.length).toBeLessThan(20_000)
    const problem = JSON.parse(res.text) as Problem
    expect(problem.code).toBe('validation_failed')
    // More than maxItems: that one error says it all, the items are not checked one by one.
    expect(problem.errors ?? [{ param: 'photoUrls' }]).toEqual([
      expect.objectContaining({ param: 'photoUrls' }),
    ])
    expect(res.ms).toBeLessThan(5_000)
    expect(res.probeMs).toBeLessThan(3_000)
  })

  it('lists at most 20 errors of an over-long invalid list on PUT /v2/pet, then says how many more', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/v2/pet',
      headers: bearer(token),
      payload: { name: 'x', photoUrls: [] },
    })
    const id = created.json().id as number
    // 20 wrong items (within maxItems) and 40 unknown fields: 60 distinct errors.
    const body = unknownMembers(40, `"id":${id},"name":"x","photoUrls":[${Array(20).fill('1').join(',')}],`)
    const res = await sendWhileProbing('PUT', '/v2/pet', body, bearer(token).authorization!)
    expect(res.status).toBe(422)
    expectBounded(JSON.parse(res.text) as Problem, 60)
  })

  it('answers POST /v2/user with 60,000 unknown fields quickly, with a bounded list, and /healthz meanwhile', async () => {
    const res = await sendWhileProbing(
      'POST',
      '/v2/user',
      unknownMembers(60_000, '"username":"bounded-post",'),
      bearer(token).authorization!,
    )
    expect(res.status).toBe(422)
    expect(res.text.length).toBeLessThan(20_000)
    expectBounded(JSON.parse(res.text) as Problem, 60_000)
    expect(res.ms).toBeLessThan(5_000)
    expect(res.probeMs).toBeLessThan(3_000)
  })

  it('answers PUT /v2/user/{username} with 60,000 unknown fields with a bounded list', async () => {
    const user = await t.app.inject({
      method: 'POST',
      url: '/v2/user',
      headers: bearer(token),
      payload: { username: 'bounded' },
    })
    const res = await sendWhileProbing(
      'PUT',
      `/v2/user/${user.json().username}`,
      unknownMembers(60_000, ''),
      bearer(token).authorization!,
    )
    expect(res.status).toBe(422)
    expectBounded(JSON.parse(res.text) as Problem, 60_000)
    expect(res.ms).toBeLessThan(5_000)
  })

  it('bounds the errors of a v1 body too (400 naming the first, at most 20 listed)', async () => {
    const res = await sendWhileProbing(
      'POST',
      '/v1/pet',
      unknownMembers(60_000, '"name":"x",'),
      `Basic ${Buffer.from(`${apiKey}:`).toString('base64')}`,
    )
    expect(res.status).toBe(400)
    const problem = JSON.parse(res.text) as Problem & { param: string }
    expect(problem.code).toBe('parameter_unknown')
    expect(problem.param).toBe('p0')
    expectBounded(problem, 60_000)
    expect(res.text.length).toBeLessThan(20_000)
  })

  it('keeps every error when there are at most 20 (no "more")', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v2/pet',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      payload: unknownMembers(19, '"name":"x","photoUrls":[],'),
    })
    expect(res.statusCode).toBe(422)
    const problem = res.json() as Problem
    expect(problem.errors).toHaveLength(19)
    expect(problem.errors_omitted).toBeUndefined()
    expect(problem.detail).not.toContain('more')
  })
})
