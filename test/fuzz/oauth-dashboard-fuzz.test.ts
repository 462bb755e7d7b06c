import fc from 'fast-check'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { SessionClient } from '../helpers/dashboard-session.ts'
import { DIALECT, describeDb } from '../helpers/database.ts'
import { newClient, type TestClient } from '../helpers/oauth.ts'
import { announce, FUZZ_SEED, fuzzTimeoutMs, requestsFor } from './fuzz-config.ts'
import {
  headerText,
  hostileContentType,
  hostileShortString,
  hostileString,
  percentEncode,
} from './hostile.ts'
import {
  type Answer,
  assertBatchChangesNothing,
  assertDashboardAnswer,
  assertOAuthAnswer,
  type FuzzRequest,
  reportFailure,
  send,
} from './invariants.ts'

const BATCH = 100
const TOTAL = requestsFor('oauthAndDashboard')
const FORM = 'application/x-www-form-urlencoded'
const PASSWORD = 'purple-otter-sings-42'

type Mode = 'any' | 'invalid'

/** RFC 6749 §2.3.1 client authentication: both halves form-encoded, then base64. */
function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${percentEncode(id)}:${percentEncode(secret)}`).toString('base64')}`
}

/** A form body from field/value pairs, repeated fields and all, or any text at all. */
function formOf(
  pairs: fc.Arbitrary<[string, string][]>,
  mode: Mode,
  forced: [string, string][],
): fc.Arbitrary<{ payload: string | Buffer; contentType: string | undefined }> {
  // In a batch that must change nothing, a forced field comes first (the forms read the first of
  // a repeated field) with a value the form refuses; nothing below alters it.
  const prefix = mode === 'invalid' && forced.length > 0 ? `${new URLSearchParams(forced).toString()}&` : ''
  const encoded = pairs.map((list) => new URLSearchParams(list).toString())
  return fc.oneof(
    { arbitrary: encoded.map((rest) => ({ payload: prefix + rest, contentType: FORM })), weight: 8 },
    {
      arbitrary: fc
        .tuple(encoded, hostileContentType)
        .map(([rest, contentType]) => ({ payload: prefix + rest, contentType })),
      weight: 1,
    },
    {
      arbitrary: fc.tuple(encoded, fc.nat()).map(([rest, at]) => {
        // Invalid UTF-8 in the middle of the form.
        const bytes = Buffer.from(rest)
        const cut = at % Math.max(bytes.length, 1)
        return {
          payload: Buffer.concat([
            Buffer.from(prefix),
            bytes.subarray(0, cut),
            Buffer.from([0xff, 0xc0, 0x80]),
            bytes.subarray(cut),
          ]),
          contentType: FORM,
        }
      }),
      weight: 1,
    },
  )
}

/** Values for a form field: a plausible one, or anything. */
function fieldValue(...plausible: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...plausible), weight: 3 },
    { arbitrary: hostileShortString, weight: 2 },
    { arbitrary: hostileString, weight: 1 },
  )
}

type Fault =
  | { kind: 'replace' | 'repeat'; index: number; value: string }
  | { kind: 'drop'; index: number }
  | { kind: 'add'; name: string; value: string }

/**
 * A valid form, then up to three faults: a field replaced, repeated, dropped, or one added (a
 * known name or any name at all). Most requests thus get past the CSRF check and reach the form's
 * own logic with one thing wrong.
 */
function faultyForm(
  base: [string, string][],
  values: Record<string, fc.Arbitrary<string>>,
): fc.Arbitrary<[string, string][]> {
  const names = Object.keys(values)
  const valuesOf = (name: string) => (Object.hasOwn(values, name) ? values[name]! : hostileShortString)
  const value = (index: number) => valuesOf(base[index % base.length]?.[0] ?? '')
  const fault: fc.Arbitrary<Fault> = fc.oneof(
    fc.nat().chain((index) => value(index).map((v) => ({ kind: 'replace' as const, index, value: v }))),
    fc.nat().chain((index) => value(index).map((v) => ({ kind: 'repeat' as const, index, value: v }))),
    fc.nat().map((index) => ({ kind: 'drop' as const, index })),
    fc
      .oneof(fc.constantFrom(...names), hostileShortString, fc.constantFrom('__proto__', 'constructor'))
      .chain((name) => valuesOf(name).map((v) => ({ kind: 'add' as const, name, value: v }))),
  )
  return fc.array(fault, { maxLength: 3 }).map((faults) => {
    const pairs = [...base]
    for (const f of faults) {
      if (f.kind === 'add') pairs.push([f.name, f.value])
      else if (pairs.length === 0) continue
      else if (f.kind === 'drop') pairs.splice(f.index % pairs.length, 1)
      else if (f.kind === 'replace')
        pairs[f.index % pairs.length] = [pairs[f.index % pairs.length]![0], f.value]
      else pairs.push([pairs[f.index % pairs.length]![0], f.value])
    }
    return pairs
  })
}

describeDb('fuzzing the OAuth token endpoint and the dashboard forms', () => {
  let t: TestApp
  let client: TestClient
  let signedIn: SessionClient
  let anonymous: SessionClient
  let email: string

  beforeAll(async () => {
    announce('oauth-dashboard-fuzz', TOTAL)
    t = await createTestApp()
    client = await newClient(t)
    email = `fuzz-${Date.now()}@example.com`
    signedIn = new SessionClient(t.app, '10.9.0.1')
    expect((await signedIn.signUp(email, PASSWORD)).statusCode).toBe(303)
    await signedIn.get('/dashboard/keys')
    anonymous = new SessionClient(t.app, '10.9.0.2')
    await anonymous.get('/dashboard/sign-in')
  })
  afterAll(() => t.close())

  function tokenRequest(mode: Mode): fc.Arbitrary<FuzzRequest> {
    // In a batch that must change nothing, no request carries the client's secret.
    const secret =
      mode === 'any' ? fieldValue(client.clientSecret, 'wrong') : hostileShortString.map((v) => `x${v}`)
    const values: Record<string, fc.Arbitrary<string>> = {
      grant_type: fieldValue(
        'client_credentials',
        'authorization_code',
        'refresh_token',
        'password',
        'implicit',
        '',
      ),
      client_id: fieldValue(client.clientId, 'pet_ci_unknown'),
      client_secret: secret,
      scope: fieldValue('read:pets', 'read:pets write:pets', 'write:users', 'openid', 'admin', ''),
      code: hostileShortString,
      code_verifier: hostileShortString,
      redirect_uri: fieldValue('https://example.com/cb', 'http://localhost/cb', 'javascript:alert(1)'),
      refresh_token: hostileShortString,
      resource: hostileShortString,
    }
    const bases: [string, string][][] = [
      [
        ['grant_type', 'client_credentials'],
        ['scope', 'read:pets'],
      ],
      [['grant_type', 'client_credentials']],
      [
        ['grant_type', 'authorization_code'],
        ['code', 'abc'],
        ['code_verifier', 'x'.repeat(43)],
        ['redirect_uri', 'https://example.com/cb'],
      ],
      [
        ['grant_type', 'refresh_token'],
        ['refresh_token', 'abc'],
      ],
    ]
    const inBody = fc
      .constantFrom(...bases)
      .chain((base) =>
        secret.chain((s) =>
          faultyForm([...base, ['client_id', client.clientId], ['client_secret', s]], values),
        ),
      )
    const withBasic = fc.constantFrom(...bases).chain((base) => faultyForm(base, values))
    const authorization = fc.oneof(
      { arbitrary: secret.map((s) => basic(client.clientId, s)), weight: 6 },
      { arbitrary: headerText, weight: 1 },
      { arbitrary: hostileShortString.map((v) => `Basic ${Buffer.from(v).toString('base64')}`), weight: 1 },
    )
    const request = fc.oneof(
      {
        arbitrary: fc.record({
          pairs: withBasic,
          authorization: authorization.map((a) => a as string | undefined),
        }),
        weight: 3,
      },
      {
        arbitrary: fc.record({ pairs: inBody, authorization: fc.constant<string | undefined>(undefined) }),
        weight: 2,
      },
    )
    return request.chain(({ pairs, authorization: auth }) =>
      formOf(fc.constant(pairs), mode, []).map((body) => ({
        method: 'POST',
        url: '/oauth/token',
        headers: {
          ...(body.contentType === undefined ? {} : { 'content-type': body.contentType }),
          ...(auth === undefined ? {} : { authorization: auth }),
        },
        payload: body.payload,
      })),
    )
  }

  function dashboardRequest(mode: Mode): fc.Arbitrary<FuzzRequest> {
    const next = fieldValue(
      '/dashboard',
      '/dashboard/€',
      '/dashboard/../../x',
      '//evil.example',
      '/oauth/authorize?x=1',
    )
    interface Form {
      url: string
      as: SessionClient
      base: fc.Arbitrary<[string, string][]>
      values: Record<string, fc.Arbitrary<string>>
      forced: [string, string][]
    }
    const forms: Form[] = [
      {
        url: '/dashboard/sign-in',
        as: anonymous,
        base: fc.constant<[string, string][]>([
          ['_csrf', anonymous.csrf],
          ['email', email],
          ['password', PASSWORD],
        ]),
        values: {
          _csrf: fieldValue(anonymous.csrf, signedIn.csrf),
          email: fieldValue(email, 'nobody@example.com', 'not-an-email'),
          password: fieldValue(PASSWORD, 'wrong'),
          next,
        },
        forced: [['password', 'zz-wrong-password']] as [string, string][],
      },
      {
        url: '/dashboard/sign-up',
        as: anonymous,
        base: fc.uuid().map((u): [string, string][] => [
          ['_csrf', anonymous.csrf],
          ['email', `${u}@example.com`],
          ['password', PASSWORD],
        ]),
        values: {
          _csrf: fieldValue(anonymous.csrf),
          email: fc.oneof(
            fieldValue('not-an-email'),
            fc.uuid().map((u) => `${u}@example.com`),
          ),
          password: fieldValue(PASSWORD, 'short', 'password'),
          next,
        },
        forced: [['email', 'zz-not-an-email']] as [string, string][],
      },
      {
        url: '/dashboard/keys',
        as: signedIn,
        base: fc.constant<[string, string][]>([
          ['_csrf', signedIn.csrf],
          ['name', 'ci'],
          ['expiry', 'never'],
          ['scopes', 'read:pets'],
        ]),
        values: {
          _csrf: fieldValue(signedIn.csrf),
          name: fieldValue('ci', ''),
          expiry: fieldValue('never', '30', '90', 'tomorrow'),
          scopes: fieldValue('read:pets', 'write:pets', 'read:users', 'write:users', 'admin'),
        },
        forced: [['expiry', 'zz-not-a-choice']] as [string, string][],
      },
    ]
    return fc.constantFrom(...forms).chain((form) =>
      form.base
        .chain((base) => faultyForm(base, form.values))
        .chain((pairs) => formOf(fc.constant(pairs), mode, form.forced))
        .map((body) => ({
          method: 'POST',
          url: form.url,
          headers: {
            cookie: form.as.cookieHeader,
            ...(body.contentType === undefined ? {} : { 'content-type': body.contentType }),
          },
          payload: body.payload,
        })),
    )
  }

  async function expectAlive(): Promise<void> {
    expect(
      (await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode,
      'the server stays alive',
    ).toBe(200)
  }

  async function sendToken(request: FuzzRequest): Promise<Answer> {
    const answer = await send(t.app, request)
    assertOAuthAnswer(request, answer)
    return answer
  }

  async function sendForm(request: FuzzRequest): Promise<Answer> {
    const answer = await send(t.app, request)
    assertDashboardAnswer(request, answer)
    return answer
  }

  async function sendAll(batch: FuzzRequest[], sendOne: (request: FuzzRequest) => Promise<Answer>) {
    for (const request of batch) await sendOne(request)
    await expectAlive()
  }

  async function sendRefused(batch: FuzzRequest[], sendOne: (request: FuzzRequest) => Promise<Answer>) {
    await assertBatchChangesNothing(t.database.db, DIALECT, batch, sendOne)
    await expectAlive()
  }

  const tokenRuns = Math.ceil((TOTAL * 0.6) / 2 / BATCH)
  const formRuns = Math.ceil((TOTAL * 0.4) / 2 / BATCH)
  const options = { endOnFailure: true, asyncReporter: reportFailure }

  it(
    'answers POST /oauth/token with RFC 6749 errors, never 5xx; refused requests change nothing',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(tokenRequest('invalid'), { minLength: BATCH, maxLength: BATCH }), (batch) =>
          sendRefused(batch, sendToken),
        ),
        { ...options, seed: FUZZ_SEED + 10, numRuns: tokenRuns },
      )
      await fc.assert(
        fc.asyncProperty(fc.array(tokenRequest('any'), { minLength: BATCH, maxLength: BATCH }), (batch) =>
          sendAll(batch, sendToken),
        ),
        { ...options, seed: FUZZ_SEED + 11, numRuns: tokenRuns },
      )
    },
    fuzzTimeoutMs(TOTAL * 0.6),
  )

  it(
    'answers the dashboard forms (sign-in, sign-up, key creation) with pages, never 5xx or a stack trace',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(dashboardRequest('invalid'), { minLength: BATCH, maxLength: BATCH }),
          (batch) => sendRefused(batch, sendForm),
        ),
        { ...options, seed: FUZZ_SEED + 20, numRuns: formRuns },
      )
      await fc.assert(
        fc.asyncProperty(fc.array(dashboardRequest('any'), { minLength: BATCH, maxLength: BATCH }), (batch) =>
          sendAll(batch, sendForm),
        ),
        { ...options, seed: FUZZ_SEED + 21, numRuns: formRuns },
      )
    },
    fuzzTimeoutMs(TOTAL * 0.4),
  )
})
