import { ApiError, type FieldError } from './api-error.ts'
import { LONE_SURROGATE_MESSAGE, NUL_MESSAGE } from './nul-characters.ts'
import type { ErrorCode } from './registry.ts'

/**
 * Ajv's errors (a route schema refusing a request) in the problem's words: the field at fault by
 * its name in the request, what it must be, and every other field found wrong in `errors`.
 */

/** A problem lists at most this many field errors; the rest are counted in `errors_omitted`. */
export const MAX_LISTED_ERRORS = 20

/** One error as Ajv reports it (Fastify's `error.validation` entries). */
export interface AjvError {
  keyword: string
  instancePath: string
  message?: string
  params: Record<string, unknown>
}

function paramName(error: AjvError): string {
  const path = error.instancePath.replace(/^\//, '').replaceAll('/', '.')
  if (error.keyword === 'required')
    return path === ''
      ? String(error.params.missingProperty)
      : `${path}.${String(error.params.missingProperty)}`
  if (error.keyword === 'additionalProperties') {
    const extra = String(error.params.additionalProperty)
    return path === '' ? extra : `${path}.${extra}`
  }
  return path
}

/** What breaking a schema `pattern` means, in words; a pattern not named here is "not in the expected form". */
const PATTERN_DESCRIPTIONS = new Map<string, string>([['\\S', 'must not be blank']])

/** Names the rule a schema pattern stands for, for the field errors that break it. */
export function describePattern(pattern: string, description: string): void {
  PATTERN_DESCRIPTIONS.set(pattern, description)
}

function describe(error: AjvError): string {
  const p = error.params
  switch (error.keyword) {
    case 'maxLength':
      return `must be at most ${String(p.limit)} characters`
    case 'minLength':
      return p.limit === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters`
    case 'pattern':
      return PATTERN_DESCRIPTIONS.get(String(p.pattern)) ?? 'is not in the expected form'
    case 'enum':
      return `must be one of ${(p.allowedValues as unknown[]).join(', ')}`
    case 'type':
      return `must be ${String(p.type).replace(',', ' or ')}`
    case 'maxItems':
      return `must have at most ${String(p.limit)} items`
    case 'maximum':
      return `must be at most ${String(p.limit)}`
    case 'minimum':
      return `must be at least ${String(p.limit)}`
    case 'format':
      return `must be a valid ${String(p.format)}`
    case 'noNul':
      return NUL_MESSAGE
    case 'wellFormed':
      return LONE_SURROGATE_MESSAGE
    default:
      return error.message ?? 'is invalid'
  }
}

const LOCATION: Record<string, string> = {
  body: 'parameter',
  querystring: 'query parameter',
  params: 'path parameter',
  headers: 'header',
}

/**
 * One entry per field, in the order Ajv found them (an empty name breaks both minLength and
 * pattern: one entry). Linear in the number of errors: a Set, not a search per entry.
 */
export function fieldErrors(validation: AjvError[]): FieldError[] {
  const seen = new Set<string>()
  const out: FieldError[] = []
  for (const e of validation) {
    // `if` only says that its `then` failed, whose own errors are listed (see validation.ts).
    if (e.keyword === 'if') continue
    const param = paramName(e)
    if (seen.has(param)) continue
    seen.add(param)
    if (e.keyword === 'required') out.push({ param, message: `\`${param}\` is required` })
    else if (e.keyword === 'additionalProperties')
      out.push({ param, message: `\`${param}\` is not a known field` })
    else out.push({ param, message: `\`${param}\` ${describe(e)}` })
  }
  return out
}

/** At most MAX_LISTED_ERRORS of `errors`, and how many were left out. */
export function listedErrors(errors: FieldError[]): { errors: FieldError[]; omitted: number } {
  return {
    errors: errors.slice(0, MAX_LISTED_ERRORS),
    omitted: Math.max(0, errors.length - MAX_LISTED_ERRORS),
  }
}

/** " and N more" for a detail whose list was cut, else "". */
export function moreText(omitted: number): string {
  return omitted === 0 ? '' : ` and ${omitted.toLocaleString('en-US')} more`
}

/** The most actionable problem first: unknown names, then missing ones, then bad values. */
function byRank(validation: AjvError[]): AjvError[] {
  const unknown: AjvError[] = []
  const missing: AjvError[] = []
  const invalid: AjvError[] = []
  for (const e of validation) {
    if (e.keyword === 'additionalProperties') unknown.push(e)
    else if (e.keyword === 'required') missing.push(e)
    else if (e.keyword !== 'if') invalid.push(e)
  }
  return [...unknown, ...missing, ...invalid]
}

/** A JSON text parsed as a form: its one "field name" is the whole document. */
function jsonReadAsForm(param: string, contentType: string | undefined): boolean {
  return /^\s*[[{]/.test(param) && String(contentType).startsWith('application/x-www-form-urlencoded')
}

/**
 * The problem for a request its route schema refused (`context`: the part of the request at
 * fault, as Fastify names it), leading with the most actionable field.
 */
export function validationProblem(
  validation: AjvError[],
  context: string,
  contentType: string | undefined,
): ApiError {
  const sorted = byRank(validation)
  const first = sorted[0]!
  const where = LOCATION[context] ?? 'parameter'
  const param = paramName(first)
  const all = fieldErrors(sorted)
  const { errors, omitted } = listedErrors(all)
  const options = {
    param,
    ...(all.length > 1 ? { errors } : {}),
    ...(omitted === 0 ? {} : { extensions: { errors_omitted: omitted } }),
  }
  const more =
    omitted === 0
      ? ''
      : ` \`errors\` lists the first ${MAX_LISTED_ERRORS} problems,${moreText(omitted)} were found.`
  let code: ErrorCode
  let detail: string
  if (first.keyword === 'additionalProperties') {
    code = 'parameter_unknown'
    detail = /^owner($|[[.])/.test(param)
      ? `Unknown ${where} \`${param}\`: send \`owner_id\` with the id of a user of your account instead of a nested owner.`
      : jsonReadAsForm(param, contentType)
        ? `The body looks like JSON but was sent as form fields (Content-Type: application/x-www-form-urlencoded, what curl -d sends by default): add -H 'Content-Type: application/json'.`
        : `Unknown ${where} \`${param}\`.`
  } else if (first.keyword === 'required') {
    code = 'parameter_missing'
    detail = `Missing required ${where} \`${param}\`.`
  } else {
    code = 'parameter_invalid'
    detail = `Invalid ${where} \`${param}\`: it ${describe(first)}.`
  }
  return new ApiError(code, `${detail}${more}`, options)
}
