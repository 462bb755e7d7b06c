import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { PetService } from '../../clients/typescript/src/index.ts'
import { createApiKey } from '../../src/keys/keys-service.ts'
import { openSandbox } from '../../src/sandboxes/sandboxes-service.ts'
import { type LiveServer, startLiveServer } from '../helpers/app.ts'
import { describeDb } from '../helpers/database.ts'
import { petctl } from '../helpers/petctl.ts'

const PYTHON_DIR = fileURLToPath(new URL('../../clients/python', import.meta.url))

/** `GET /v1/account` through both client libraries and `petctl whoami`, for a live key and a sandbox key. */
describeDb('the key’s account in the clients', () => {
  let live: LiveServer
  let liveKey: string
  let liveAccountId: string
  let sandboxKey: string
  let sandboxId: string

  beforeAll(async () => {
    live = await startLiveServer()
    const account = await live.newAccount()
    liveKey = account.apiKey
    liveAccountId = account.accountId
    sandboxId = (await openSandbox(live.database.db, liveAccountId)).sandbox.id
    sandboxKey = (await createApiKey(live.database.db, { accountId: sandboxId })).apiKey
  })
  afterAll(() => live.close())

  it('answers the live or sandbox account in the TypeScript client', async () => {
    const ofLive = await new PetService({ apiKey: liveKey, baseUrl: live.url }).account.retrieve()
    expect(ofLive).toMatchObject({
      id: liveAccountId,
      object: 'account',
      mode: 'live',
      live_account_id: null,
    })
    const ofSandbox = await new PetService({ apiKey: sandboxKey, baseUrl: live.url }).account.retrieve()
    expect(ofSandbox).toMatchObject({ id: sandboxId, mode: 'sandbox', live_account_id: liveAccountId })
  })

  it('answers it in the Python client', async () => {
    const script =
      'import json, os, pet_service; a = pet_service.PetService(api_key=os.environ["KEY"], base_url=os.environ["URL"]).account.retrieve(); print(json.dumps([a["id"], a["mode"], a["live_account_id"]]))'
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn('python3', ['-c', script], {
        cwd: PYTHON_DIR,
        env: { ...process.env, KEY: sandboxKey, URL: live.url },
      })
      let out = ''
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString()
      })
      child.stderr.on('data', (d: Buffer) => {
        out += d.toString()
      })
      child.on('error', reject)
      child.on('close', () => resolve(out))
    })
    expect(JSON.parse(output)).toEqual([sandboxId, 'sandbox', liveAccountId])
  })

  it('petctl whoami says which mode the key is in, as text or --json', async () => {
    const env = (key: string) => ({ PET_SERVICE_URL: live.url, PET_SERVICE_API_KEY: key })
    const ofLive = await petctl(['whoami'], env(liveKey))
    expect(ofLive.code, ofLive.stderr).toBe(0)
    expect(ofLive.stdout).toBe(`${liveAccountId}  live\n`)
    const ofSandbox = await petctl(['whoami'], env(sandboxKey))
    expect(ofSandbox.stdout).toBe(`${sandboxId}  sandbox (test data) of ${liveAccountId}\n`)
    const asJson = await petctl(['whoami', '--json'], env(sandboxKey))
    expect(JSON.parse(asJson.stdout)).toMatchObject({ id: sandboxId, mode: 'sandbox' })
    const help = await petctl(['whoami', '--help'], {})
    expect(help.stdout).toContain('petctl whoami')
  })

  it('refuses an unknown key with a problem, in the clients as over HTTP', async () => {
    const res = await fetch(`${live.url}/v1/account`)
    expect(res.status).toBe(401)
    expect(res.headers.get('content-type')).toContain('application/problem+json')
    const refused = await petctl(['whoami'], {
      PET_SERVICE_URL: live.url,
      PET_SERVICE_API_KEY: 'pet_sk_test_x',
    })
    expect(refused.code).toBe(1)
  })
})
