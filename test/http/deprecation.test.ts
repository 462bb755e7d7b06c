import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ApiError } from '../../src/errors/api-error.ts'
import { deprecationHeaders } from '../../src/http/deprecation.ts'
import { createTestApp } from '../helpers/app.ts'
import { createTestDatabase, describeDb, type TestDatabase } from '../helpers/database.ts'

// Nothing in the API is deprecated yet: these routes exist only in this test, registered on the
// real app the way a route of the service would declare its deprecation.
describeDb('deprecated routes (RFC 9745 Deprecation, RFC 8594 Sunset)', () => {
  let database: TestDatabase
  let app: FastifyInstance

  beforeAll(async () => {
    database = await createTestDatabase()
    app = (await createTestApp({}, { database, ready: false })).app
    app.get(
      '/v1/old-thing',
      {
        schema: { summary: 'An old thing', tags: ['Operations'] },
        config: {
          deprecated: {
            since: '2027-01-01',
            sunset: '2027-07-01T00:00:00Z',
            link: '/docs/migrate-old-thing',
          },
        },
      },
      async (request, reply) => {
        if ((request.query as { fail?: string }).fail !== undefined)
          throw new ApiError('invalid_request', 'You asked for a failure.')
        reply.header('link', '</v1/old-thing?page=2>; rel="next"')
        return { ok: true }
      },
    )
    app.get('/v1/new-thing', { schema: { summary: 'A new thing', tags: ['Operations'] } }, async () => ({
      ok: true,
    }))
    await app.ready()
  })
  afterAll(async () => {
    await app?.close()
    await database?.destroy()
  })

  it('says when a route was deprecated, when it goes away, and where to read more', async () => {
    const response = await app.inject({ url: '/v1/old-thing' })
    expect(response.statusCode).toBe(200)
    expect(response.headers.deprecation).toBe(`@${Date.UTC(2027, 0, 1) / 1000}`)
    expect(response.headers.sunset).toBe('Thu, 01 Jul 2027 00:00:00 GMT')
    // The route's own Link is kept; the deprecation link is added to it.
    expect(response.headers.link).toBe(
      '</v1/old-thing?page=2>; rel="next", </docs/migrate-old-thing>; rel="deprecation"',
    )
  })

  it('says so on its errors too', async () => {
    const response = await app.inject({ url: '/v1/old-thing?fail=1' })
    expect(response.statusCode).toBe(400)
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(response.headers.deprecation).toBe(`@${Date.UTC(2027, 0, 1) / 1000}`)
    expect(response.headers.sunset).toBeDefined()
  })

  it('leaves routes that are not deprecated alone', async () => {
    const response = await app.inject({ url: '/v1/new-thing' })
    expect(response.headers.deprecation).toBeUndefined()
    expect(response.headers.sunset).toBeUndefined()
    expect(response.headers.link).toBeUndefined()
  })

  it('marks the operation deprecated in the OpenAPI document', async () => {
    const document = (await app.inject({ url: '/openapi.json' })).json() as {
      paths: Record<string, { get?: { deprecated?: boolean } }>
    }
    expect(document.paths['/v1/old-thing']?.get?.deprecated).toBe(true)
    expect(document.paths['/v1/new-thing']?.get?.deprecated).toBeUndefined()
  })
})

describe('a deprecation declaration', () => {
  it('refuses dates that are not ISO 8601, and a sunset before the deprecation', () => {
    expect(() => deprecationHeaders({ since: 'next year' }, 'GET /x')).toThrow(/GET \/x: deprecated.since/)
    expect(() => deprecationHeaders({ since: '2027-01-01', sunset: '2026-12-31' }, 'GET /x')).toThrow(
      /sunset must come after/,
    )
  })

  it('needs only the date it was deprecated', () => {
    expect(deprecationHeaders({ since: '2027-01-01T12:00:00Z' }, 'GET /x')).toEqual([
      ['deprecation', `@${Date.UTC(2027, 0, 1, 12) / 1000}`],
    ])
  })
})
