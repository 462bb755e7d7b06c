import providerStorage from 'oidc-provider/lib/helpers/als.js'
import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { ProviderRequests } from '../../../src/oauth/provider-context.ts'
import { createTestApp, type TestApp } from '../../helpers/app.ts'
import { describeDb } from '../../helpers/database.ts'
import { clientBasic, newClient, type TestClient } from '../../helpers/oauth.ts'

// src/oauth/provider-context.ts: the provider's AsyncLocalStorage is switched off once its
// requests are over, so its promise hooks do not tax the rest of the service. Over a real socket,
// as the service is used.
describeDb("oidc-provider's request storage", () => {
  let t: TestApp
  let client: TestClient
  let base: string

  beforeAll(async () => {
    t = await createTestApp()
    client = await newClient(t)
    base = await t.app.listen({ port: 0, host: '127.0.0.1' })
  })
  afterAll(async () => {
    vi.restoreAllMocks()
    await t.close()
  })

  const token = () =>
    fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: clientBasic(client.clientId, client.clientSecret),
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials&scope=read%3Apets',
    })

  it('is the one the provider runs its requests in, disabled after each, and enabled again by the next', async () => {
    const run = vi.spyOn(providerStorage, 'run')
    const disable = vi.spyOn(providerStorage, 'disable')
    for (let round = 1; round <= 2; round++) {
      const res = await token()
      expect(res.status, await res.clone().text()).toBe(200)
      expect(await res.json()).toMatchObject({ token_type: 'Bearer', scope: 'read:pets' })
      // The response's close event comes after the body has been read.
      await vi.waitFor(() => expect(disable).toHaveBeenCalledTimes(round))
      expect(run).toHaveBeenCalledTimes(round)
    }
  })

  it('stays enabled while another provider request is in flight, in any app of the process', () => {
    const disable = vi.spyOn(providerStorage, 'disable')
    disable.mockClear()
    // One per mounted provider; the storage is one per process.
    const [one, other] = [new ProviderRequests(), new ProviderRequests()]
    one.enter()
    other.enter()
    one.leave()
    expect(disable).not.toHaveBeenCalled()
    other.leave()
    expect(disable).toHaveBeenCalledTimes(1)
  })
})
