import type { FastifyRequest } from 'fastify'
import { ApiError } from '../../errors/api-error.ts'
import { quoteHeaderValue } from '../../errors/redact.ts'
import { type AjvError, fieldErrors, listedErrors, moreText } from '../../errors/validation-errors.ts'

/**
 * The checks every Petstore operation shares. Its routes take `attachValidation`, so that the
 * Petstore's own answers (400 "Invalid ID supplied" before 422) come first; these turn what
 * validation found into the Petstore's answers.
 */

/** 422 "Validation exception" listing every field at fault (the Petstore's PUT/POST contract). */
export function assertValid(request: FastifyRequest): void {
  const validation = (request.validationError as { validation?: AjvError[] } | undefined)?.validation
  if (validation !== undefined) throw validationException(validation)
}

/** The Petstore's 422 "Validation exception" listing the fields at fault (v2 POST/PUT bodies). */
export function validationException(validation: AjvError[]): ApiError {
  const all = fieldErrors(validation)
  const { errors, omitted } = listedErrors(all)
  return new ApiError(
    'validation_failed',
    `Validation exception: ${errors.map((e) => e.message).join('; ')}${omitted === 0 ? '' : `;${moreText(omitted)}`}.`,
    {
      errors,
      ...(all.length === 1 ? { param: errors[0]!.param } : {}),
      ...(omitted === 0 ? {} : { extensions: { errors_omitted: omitted } }),
    },
  )
}

/** 415 unless the body is JSON (the Petstore's pet and user bodies are). */
export function assertJson(request: FastifyRequest, what: string): void {
  const type = request.headers['content-type'] ?? ''
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw new ApiError(
      'unsupported_media_type',
      `Content-Type ${quoteHeaderValue(type)} is not accepted here; send the ${what} as application/json.`,
    )
  }
}

/** The values of a repeated and/or comma-separated parameter; 400 past `limit` values. */
export function splitList(values: string[], param: string, limit: number): string[] {
  const list = values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '')
  if (list.length > limit) {
    throw new ApiError(
      'parameter_invalid',
      `Invalid query parameter \`${param}\`: send at most ${limit} values (${list.length} were sent).`,
      { param },
    )
  }
  return list
}
