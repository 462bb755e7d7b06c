import { ERRORS, type ErrorCode } from './registry.ts'

export interface FieldError {
  param: string
  message: string
}

export interface ApiErrorOptions {
  param?: string
  errors?: FieldError[]
  headers?: Record<string, string>
  /** Extra members of the problem document (e.g. `allowed_transitions`). */
  extensions?: Record<string, unknown>
}

/** An error the client can act on; rendered as problem+json by the error handler. */
export class ApiError extends Error {
  readonly status: number
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly options: ApiErrorOptions = {},
  ) {
    super(detail)
    this.name = 'ApiError'
    this.status = ERRORS[code].status
  }
}
