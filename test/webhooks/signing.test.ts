import { Webhook, WebhookVerificationError } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import { newWebhookSecret, signedHeaders } from '../../src/webhooks/signing.ts'

/** Verification by the independent `standardwebhooks` package (the specification's own library). */
function verify(secret: string, body: string, headers: Record<string, string>): unknown {
  return new Webhook(secret).verify(body, headers)
}

describe('webhook signatures (Standard Webhooks)', () => {
  const body = JSON.stringify({
    id: 'evt_1',
    object: 'event',
    type: 'pet.created',
    data: { object: { id: 1 } },
  })
  const now = () => Math.floor(Date.now() / 1000)

  it('makes whsec_ secrets of 32 random bytes', () => {
    const secret = newWebhookSecret()
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32)
    expect(newWebhookSecret()).not.toBe(secret)
  })

  it('signs so that the standardwebhooks package verifies the delivery', () => {
    const secret = newWebhookSecret()
    const headers = signedHeaders([secret], 'evt_1', now(), body)
    expect(headers['webhook-id']).toBe('evt_1')
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/)
    expect(verify(secret, body, headers)).toEqual(JSON.parse(body))
  })

  it('refuses a tampered body, an old timestamp and a wrong secret', () => {
    const secret = newWebhookSecret()
    const headers = signedHeaders([secret], 'evt_1', now(), body)
    expect(() => verify(secret, body.replace('pet.created', 'pet.deleted'), headers)).toThrow(
      WebhookVerificationError,
    )
    const old = signedHeaders([secret], 'evt_1', now() - 6 * 60, body)
    expect(() => verify(secret, body, old)).toThrow(/too old/i)
    expect(() => verify(newWebhookSecret(), body, headers)).toThrow(WebhookVerificationError)
  })

  it('signs with both secrets during a rotation: either one verifies', () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()]
    const headers = signedHeaders([current, previous], 'evt_2', now(), body)
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2)
    expect(verify(current, body, headers)).toBeTruthy()
    expect(verify(previous, body, headers)).toBeTruthy()
    expect(() => verify(newWebhookSecret(), body, headers)).toThrow(WebhookVerificationError)
  })
})
