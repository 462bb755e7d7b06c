import fc from 'fast-check'

/** Percent-encodes the UTF-8 of any string (lone surrogates included, as U+FFFD). */
export function percentEncode(text: string): string {
  let out = ''
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte)
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/** Strings that have broken parsers, databases and templates before. */
const NASTY = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\uFEFF',
  '\uD800',
  '\uDFFF',
  '€',
  '🐶',
  'e\u0301',
  '\u202Eevil',
  '../../etc/passwd',
  '%00',
  '%',
  '%E2%82',
  '%zz',
  '<script>alert(1)</script>',
  "'; drop table pets; --",
  '" or "1"="1',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, sent as text.
  '${7*7}',
  '{{7*7}}',
  '\r\nSet-Cookie: x=y',
  'null',
  'undefined',
  'true',
  'NaN',
  'Infinity',
  '1e309',
  '-0',
  '__proto__',
  'constructor',
  'prototype',
  'hasOwnProperty',
  '\\',
  '"',
  '\\u0000',
  'available',
  'sold',
  'pet_sk_',
  'usr_',
]

/** Text a URL can carry (Node reads at most 16 KiB of request line and headers). */
export const hostileShortString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...NASTY), weight: 4 },
  { arbitrary: fc.string({ maxLength: 30 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 30 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }), weight: 2 },
  { arbitrary: fc.integer({ min: 190, max: 2000 }).map((n) => 'x'.repeat(n)), weight: 1 },
  // PostgreSQL refuses U+0000 in text; SQLite keeps it.
  { arbitrary: fc.string({ maxLength: 10 }).map((s) => `${s}\u0000${s}`), weight: 1 },
)

/** Any text a client could send in a field: short and odd, unicode of every plane, or long. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: hostileShortString, weight: 12 },
  { arbitrary: fc.constantFrom(5_000, 70_000, 400_000).map((n) => 'é'.repeat(n)), weight: 1 },
)

/** Text as Node's HTTP parser lets it through in a header value (tab, visible ASCII, obs-text). */
export const headerText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom('', ' ', '\t', 'é', 'a,b', '"1"', '*', 'W/"1"', '%00', '\u00ff\u00fe'),
  fc.integer({ min: 200, max: 8000 }).map((n) => 'h'.repeat(n)),
)

/** Ids in paths: negative, zero, huge, int64 edges, non-digits, encoded slashes, unicode. */
export const hostileId: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '0',
    '-1',
    '-0',
    '00',
    '+1',
    ' 1',
    '1 ',
    '1.0',
    '1.5',
    '1e3',
    '0x10',
    '9007199254740991',
    '9007199254740992',
    '9007199254740993',
    '9223372036854775807',
    '9223372036854775808',
    '-9223372036854775808',
    '-9223372036854775809',
    '18446744073709551616',
    '1'.repeat(40),
    'NaN',
    'Infinity',
    'null',
    'abc',
    'usr_',
    'usr_xxxxxxxxxxxxxxxxxxxx',
    '%2F',
    '%2f..%2f',
    '..',
    '%2e%2e',
    '%00',
    '%',
    '%zz',
    '%E2%82%AC',
    '%F0%9F%90%B6',
    '%C0%AF',
    '%FF',
    '1%00',
    '1;drop',
    '1?x=1',
    '1%23',
    'x'.repeat(300),
  ),
  fc.integer({ min: -1000, max: 0 }).map(String),
  fc.bigInt({ min: 2n ** 53n, max: 2n ** 70n }).map(String),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }).map(percentEncode),
)

/** Content types, right and wrong. */
export const hostileContentType: fc.Arbitrary<string | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=utf-16',
    'application/json; charset=latin1',
    'APPLICATION/JSON',
    'application/json;',
    'application/jsonx',
    'application/x-www-form-urlencoded',
    'application/x-www-form-urlencoded; charset=iso-8859-1',
    'multipart/form-data',
    'multipart/form-data; boundary=',
    'multipart/form-data; boundary=fuzz',
    'text/plain',
    'text/html',
    'application/xml',
    'application/octet-stream',
    '*/*',
    '',
    ';',
    'application/problem+json',
    'application/merge-patch+json',
  ),
  headerText,
)

/** A JSON text nested `depth` deep (arrays or objects). */
export function deepJson(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array'
    ? `${'['.repeat(depth)}${']'.repeat(depth)}`
    : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
}

/** Any JSON value, sometimes large. */
export const anyJsonValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 6 },
  { arbitrary: hostileString, weight: 3 },
  { arbitrary: fc.constantFrom(-1, 0, 1.5, 2 ** 53, -(2 ** 63), 1e308, -0), weight: 2 },
  { arbitrary: fc.array(fc.constant(1), { minLength: 100, maxLength: 2000 }), weight: 1 },
)
