import Ajv from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifyInstance } from 'fastify'
import { NUL } from '../errors/nul-characters.ts'

/**
 * Two validators: bodies are checked as sent (no type coercion: `"name": 5` is an error, not
 * "5"), while query strings, path parameters and headers, which are text by nature, are coerced
 * to the declared types. Neither strips unknown properties: schemas that forbid them make the
 * request fail with the name of the stray parameter instead.
 */
export function registerValidation(app: FastifyInstance): void {
  const common = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false } as const
  const body = new Ajv.default({ ...common, coerceTypes: false })
  const text = new Ajv.default({ ...common, coerceTypes: 'array' })
  for (const ajv of [body, text]) {
    addFormats.default(ajv)
    ajv.addKeyword({
      keyword: 'noNul',
      type: 'string',
      schemaType: 'boolean',
      errors: false,
      validate: (_schema: boolean, data: string) => !data.includes(NUL),
    })
    ajv.addKeyword({
      keyword: 'wellFormed',
      type: 'string',
      schemaType: 'boolean',
      errors: false,
      validate: (_schema: boolean, data: string) => data.isWellFormed(),
    })
  }
  // The route's own schema (used for the OpenAPI document) is left as it is; a hardened copy is
  // compiled.
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? body : text).compile(hardenedSchema(schema) as object),
  )
}

/**
 * The schema as compiled:
 * - every string refuses U+0000 (`noNul`): PostgreSQL cannot store it, and both dialects must
 *   answer the same 400/422 naming the field; and a lone surrogate (`wellFormed`), which
 *   neither stores as sent (src/errors/nul-characters.ts);
 * - with `allErrors`, Ajv checks every item of an array even when the array is already longer
 *   than its `maxItems`: 80,000 wrong items are 80,000 errors (and megabytes of them) for one
 *   request. Items are checked only when the length is within bounds, so a too-long array is the
 *   one `maxItems` error. The `if` error Ajv adds when `then` fails is left out of the field list
 *   by the error handler.
 */
export function hardenedSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(hardenedSchema)
  if (schema === null || typeof schema !== 'object') return schema
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(schema)) out[key] = hardenedSchema(value)
  const type = out.type
  if ((type === 'string' || (Array.isArray(type) && type.includes('string'))) && out.format !== 'binary') {
    out.noNul = true
    out.wellFormed = true
  }
  if (typeof out.maxItems === 'number' && out.items !== undefined) {
    const { items, ...rest } = out
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keywords, never awaited.
    const bounded = { if: { maxItems: out.maxItems }, then: { items } }
    return { ...rest, allOf: [...((rest.allOf as unknown[] | undefined) ?? []), bounded] }
  }
  return out
}
