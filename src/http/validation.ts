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
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? body : text).compile(schema))
}
