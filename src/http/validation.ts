import Ajv from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifyInstance } from 'fastify'

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
  for (const ajv of [body, text]) addFormats.default(ajv)
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? body : text).compile(itemsOnlyWithinMaxItems(schema) as object),
  )
}

/**
 * With `allErrors`, Ajv checks every item of an array even when the array is already longer
 * than its `maxItems`: 80,000 wrong items are 80,000 errors (and megabytes of them) for one
 * request. In the schema that is compiled (the route's own, used for the OpenAPI document, is
 * left as it is) the items are checked only when the length is within bounds, so a too-long
 * array is the one `maxItems` error. The `if` error Ajv adds when `then` fails is skipped by the
 * error handler's field list.
 */
export function itemsOnlyWithinMaxItems(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(itemsOnlyWithinMaxItems)
  if (schema === null || typeof schema !== 'object') return schema
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(schema)) out[key] = itemsOnlyWithinMaxItems(value)
  if (typeof out.maxItems === 'number' && out.items !== undefined) {
    const { items, ...rest } = out
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keywords, never awaited.
    const bounded = { if: { maxItems: out.maxItems }, then: { items } }
    return { ...rest, allOf: [...((rest.allOf as unknown[] | undefined) ?? []), bounded] }
  }
  return out
}
