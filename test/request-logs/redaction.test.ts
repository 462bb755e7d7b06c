import { describe, expect, it } from 'vitest'
import { isSecretName, redactFields, redactSecretValues, urlForLogs } from '../../src/errors/redact.ts'

// The one redaction list, as the request logs and the server log apply it (no database).
describe('redaction for logs', () => {
  it('judges names decoded and in any case, by the list and by what they contain', () => {
    for (const name of [
      'password',
      '%70assword',
      'PassWord',
      'new_password',
      'client_secret',
      'refresh_token',
    ])
      expect(isSecretName(name), name).toBe(true)
    for (const name of ['Authorization', 'cookie', 'x-api-key', 'api_key', 'secret', 'code', 'access_token'])
      expect(isSecretName(name), name).toBe(true)
    for (const name of ['name', 'owner_id', 'status', 'content-type', 'idempotency-key', 'request_id'])
      expect(isSecretName(name), name).toBe(false)
  })

  it('hides secret fields at any depth, and credentials by their shape in any string', () => {
    const key = `pet_sk_${'a'.repeat(30)}abcdef`
    expect(
      redactFields({
        name: `my key is ${key}`,
        owner: { password: 'hunter2', tags: [{ secret: 'whsec_abc' }] },
        note: 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl',
        client_id: 'pet_ci_keptvisible',
      }),
    ).toEqual({
      name: 'my key is ***',
      owner: { password: '***', tags: [{ secret: '***' }] },
      note: '***',
      client_id: 'pet_ci_keptvisible',
    })
    expect(redactSecretValues('{"detail":"whsec_Zm9vYmFy= is not a URL"}')).toBe(
      '{"detail":"*** is not a URL"}',
    )
  })

  it('keeps a __proto__ field a field, never the copy’s prototype', () => {
    const copy = redactFields(JSON.parse('{"__proto__":{"password":"x","polluted":true}}')) as object
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"password":"***","polluted":true}}')
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined()
  })

  it('hides the values of secret query parameters in a path, whatever their spelling', () => {
    expect(urlForLogs('/v1/pet?limit=2&X-Api-Key=abc&new_password=p&p%61ssword=q')).toBe(
      '/v1/pet?limit=2&X-Api-Key=***&new_password=***&p%61ssword=***',
    )
  })
})
