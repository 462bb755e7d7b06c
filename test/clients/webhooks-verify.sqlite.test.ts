import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import { WebhookVerificationError, webhooks } from '../../clients/typescript/src/index.ts'

// Webhook signatures as the service sends them (Standard Webhooks), checked against the
// independent reference implementation, the `standardwebhooks` npm package, in both directions,
// for the TypeScript client and the Python client. No service and no database are involved.

const PYTHON_DIR = fileURLToPath(new URL('../../clients/python', import.meta.url))
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const OTHER_SECRET = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD'
const EVENT = {
  id: 'evt_2VfWkXx3jL0aQ8mN',
  object: 'event',
  type: 'pet.updated',
  created_at: '2026-11-24T00:00:00.000Z',
  data: { object: { id: 7, object: 'pet', name: 'Rëx 🐕' }, previous_attributes: { name: 'Rex' } },
}
const BODY = JSON.stringify(EVENT)
const NOW = new Date('2026-11-24T00:00:10Z')
const NOW_S = Math.floor(NOW.getTime() / 1000)

/** The reason a verification was refused, or 'accepted'. */
async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
    return 'accepted'
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason
    throw error
  }
}

describe('webhooks.sign and webhooks.verify (TypeScript client)', () => {
  it('signs as standardwebhooks does: the reference package verifies our headers', async () => {
    const headers = await webhooks.sign(BODY, SECRET, { id: EVENT.id, timestamp: NOW })
    expect(headers['webhook-id']).toBe(EVENT.id)
    expect(headers['webhook-timestamp']).toBe(String(NOW_S))
    expect(headers['webhook-signature']).toBe(new Webhook(SECRET).sign(EVENT.id, NOW, BODY))
    // The package checks the timestamp against the real clock: sign with the current time.
    const fresh = await webhooks.sign(BODY, SECRET, { id: EVENT.id })
    expect(new Webhook(SECRET).verify(BODY, { ...fresh })).toEqual(EVENT)
  })

  it('verifies what the reference package signs, from a string, a Buffer, Headers or node headers', async () => {
    const wh = new Webhook(SECRET)
    const headers = {
      'webhook-id': EVENT.id,
      'webhook-timestamp': String(NOW_S),
      'webhook-signature': wh.sign(EVENT.id, NOW, BODY),
    }
    const options = { now: NOW }
    expect(await webhooks.verify(BODY, headers, SECRET, options)).toEqual(EVENT)
    expect(await webhooks.verify(Buffer.from(BODY), headers, SECRET, options)).toEqual(EVENT)
    expect(await webhooks.verify(new TextEncoder().encode(BODY).buffer, headers, SECRET, options)).toEqual(
      EVENT,
    )
    expect(await webhooks.verify(BODY, new Headers(headers), SECRET, options)).toEqual(EVENT)
    const shouted = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]))
    expect(await webhooks.verify(BODY, shouted, SECRET, options)).toEqual(EVENT)
  })

  it('refuses a tampered body, a wrong secret and an unsigned request, saying why', async () => {
    const headers = await webhooks.sign(BODY, SECRET, { id: EVENT.id, timestamp: NOW })
    const options = { now: NOW }
    const tampered = BODY.replace('Rëx', 'Rex')
    expect(await outcome(webhooks.verify(tampered, headers, SECRET, options))).toBe('no_valid_signature')
    expect(await outcome(webhooks.verify(BODY, headers, OTHER_SECRET, options))).toBe('no_valid_signature')
    // Another message id or timestamp with the same signature is another message.
    const replayed = { ...headers, 'webhook-id': 'evt_other' }
    expect(await outcome(webhooks.verify(BODY, replayed, SECRET, options))).toBe('no_valid_signature')
    const { 'webhook-signature': _, ...unsigned } = headers
    const error = await webhooks.verify(BODY, unsigned, SECRET, options).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(WebhookVerificationError)
    expect(error).toMatchObject({ reason: 'missing_header', code: 'missing_header' })
    expect((error as Error).message).toContain('webhook-signature')
    const onlyV2 = { ...headers, 'webhook-signature': headers['webhook-signature'].replace('v1,', 'v2,') }
    expect(await outcome(webhooks.verify(BODY, onlyV2, SECRET, options))).toBe('no_valid_signature')
    const notANumber = { ...headers, 'webhook-timestamp': '2026-11-24T00:00:00Z' }
    expect(await outcome(webhooks.verify(BODY, notANumber, SECRET, options))).toBe('invalid_timestamp')
  })

  it('accepts a timestamp up to 5 minutes off either way, and refuses one further off', async () => {
    const headers = await webhooks.sign(BODY, SECRET, { id: EVENT.id, timestamp: NOW })
    const at = (seconds: number) => ({ now: (NOW_S + seconds) * 1000 })
    expect(await outcome(webhooks.verify(BODY, headers, SECRET, at(300)))).toBe('accepted')
    expect(await outcome(webhooks.verify(BODY, headers, SECRET, at(301)))).toBe('timestamp_too_old')
    expect(await outcome(webhooks.verify(BODY, headers, SECRET, at(-300)))).toBe('accepted')
    expect(await outcome(webhooks.verify(BODY, headers, SECRET, at(-301)))).toBe('timestamp_too_new')
    const wide = { ...at(3600), tolerance: 3600 }
    expect(await outcome(webhooks.verify(BODY, headers, SECRET, wide))).toBe('accepted')
    // The reference package refuses the same old timestamp (it uses the real clock).
    const old = await webhooks.sign(BODY, SECRET, { id: EVENT.id, timestamp: Date.now() / 1000 - 301 })
    expect(() => new Webhook(SECRET).verify(BODY, { ...old })).toThrow(/too old/)
  })

  it('during a rotation signs with both secrets, and either secret verifies', async () => {
    const headers = await webhooks.sign(BODY, [SECRET, OTHER_SECRET], { id: EVENT.id })
    const entries = headers['webhook-signature'].split(' ')
    expect(entries).toHaveLength(2)
    expect(entries.every((e) => e.startsWith('v1,'))).toBe(true)
    expect(new Webhook(SECRET).verify(BODY, { ...headers })).toEqual(EVENT)
    expect(new Webhook(OTHER_SECRET).verify(BODY, { ...headers })).toEqual(EVENT)
    expect(await webhooks.verify(BODY, headers, SECRET)).toEqual(EVENT)
    expect(await webhooks.verify(BODY, headers, OTHER_SECRET)).toEqual(EVENT)
    // A receiver may hold several secrets too: any of them matching any entry is enough.
    const single = await webhooks.sign(BODY, OTHER_SECRET, { id: EVENT.id })
    expect(await webhooks.verify(BODY, single, [SECRET, OTHER_SECRET])).toEqual(EVENT)
  })

  it('makes secrets in the service’s form, usable by the reference package', async () => {
    const secret = webhooks.generateSecret()
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(webhooks.generateSecret()).not.toBe(secret)
    const headers = await webhooks.sign(BODY, secret, { id: EVENT.id })
    expect(new Webhook(secret).verify(BODY, { ...headers })).toEqual(EVENT)
  })

  it('refuses parsed JSON instead of the raw body, and a malformed secret, as programming errors', async () => {
    const headers = await webhooks.sign(BODY, SECRET, { id: EVENT.id })
    await expect(webhooks.verify(EVENT as never, headers, SECRET)).rejects.toThrow(/raw request body/)
    await expect(webhooks.verify(BODY, headers, 'whsec_')).rejects.toThrow(/whsec_ followed by base64/)
  })
})

const execFileAsync = promisify(execFile)

/** Runs a Python snippet with the Python client importable; answers its stdout. */
async function python(code: string, input: Record<string, unknown>): Promise<string> {
  const { stdout } = await execFileAsync('python3', ['-c', code, JSON.stringify(input)], {
    cwd: PYTHON_DIR,
    env: { ...process.env, PYTHONPATH: PYTHON_DIR, PYTHONDONTWRITEBYTECODE: '1' },
  })
  return stdout
}

const PY_SIGN = `
import json, sys
from pet_service import webhooks
a = json.loads(sys.argv[1])
print(json.dumps(webhooks.sign(a["body"].encode(), a["secret"], msg_id=a["id"], timestamp=a.get("timestamp"))))
`
const PY_VERIFY = `
import json, sys
from pet_service import webhooks
a = json.loads(sys.argv[1])
try:
    event = webhooks.verify(a["body"].encode(), a["headers"], a["secret"], now=a.get("now"))
    print(json.dumps({"ok": event}))
except webhooks.WebhookVerificationError as e:
    print(json.dumps({"refused": e.reason}))
`

describe('pet_service.webhooks (Python client) against the reference package', () => {
  it('signs what the reference package verifies, byte for byte the same', async () => {
    const headers = JSON.parse(
      await python(PY_SIGN, { body: BODY, secret: [SECRET, OTHER_SECRET], id: EVENT.id, timestamp: NOW_S }),
    )
    const reference = [new Webhook(SECRET), new Webhook(OTHER_SECRET)].map((w) => w.sign(EVENT.id, NOW, BODY))
    expect(headers).toEqual({
      'webhook-id': EVENT.id,
      'webhook-timestamp': String(NOW_S),
      'webhook-signature': reference.join(' '),
    })
    const fresh = JSON.parse(await python(PY_SIGN, { body: BODY, secret: SECRET, id: EVENT.id }))
    expect(new Webhook(SECRET).verify(BODY, fresh)).toEqual(EVENT)
  })

  it('verifies what the reference package signs, and refuses tampering, old timestamps and wrong secrets', async () => {
    const headers = {
      'Webhook-Id': EVENT.id,
      'Webhook-Timestamp': String(NOW_S),
      'Webhook-Signature': new Webhook(SECRET).sign(EVENT.id, NOW, BODY),
    }
    const check = async (input: Record<string, unknown>) =>
      JSON.parse(await python(PY_VERIFY, { body: BODY, headers, secret: SECRET, now: NOW_S, ...input }))
    expect(await check({})).toEqual({ ok: EVENT })
    expect(await check({ body: BODY.replace('Rëx', 'Rex') })).toEqual({ refused: 'no_valid_signature' })
    expect(await check({ secret: OTHER_SECRET })).toEqual({ refused: 'no_valid_signature' })
    expect(await check({ now: NOW_S + 301 })).toEqual({ refused: 'timestamp_too_old' })
    expect(await check({ now: NOW_S - 301 })).toEqual({ refused: 'timestamp_too_new' })
    expect(await check({ now: NOW_S + 300 })).toEqual({ ok: EVENT })
  })
})
