import type { FastifyRequest } from 'fastify'

/** How a form field's text is read: as JSON would carry the value. */
export type FormFieldType = 'integer' | 'boolean' | 'nullable'

const INTEGER_TEXT = /^\d{1,16}$/

/**
 * Form fields arrive as text, and bodies are validated as sent (no coercion, http/validation.ts):
 * this reads the named fields of a form body as the types a JSON body would carry — digits as an
 * integer, `true`/`false` as a boolean, an empty `nullable` field as null (cleared). Any other
 * text is left as it is, for validation to refuse with the field's name. JSON bodies are left
 * alone.
 */
export function readFormFields(types: Record<string, FormFieldType>) {
  return async function formFieldTypes(request: FastifyRequest): Promise<void> {
    const type = request.headers['content-type'] ?? ''
    if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)) return
    const body = request.body
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return
    const fields = body as Record<string, unknown>
    for (const [name, kind] of Object.entries(types)) {
      const value = fields[name]
      if (typeof value !== 'string') continue
      if (kind === 'integer' && INTEGER_TEXT.test(value)) fields[name] = Number(value)
      else if (kind === 'boolean' && (value === 'true' || value === 'false')) fields[name] = value === 'true'
      else if (kind === 'nullable' && value === '') fields[name] = null
    }
  }
}
