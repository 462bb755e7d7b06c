import type { PetServiceError } from '../../clients/typescript/src/index.ts'

/** A command line petctl refuses before any request: exit status 2, with what to fix. */
export class UsageError extends Error {}

/** A command that failed though the API answered each request: exit status 1, with why. */
export class CommandFailure extends Error {}

/** The problem detail, then what identifies it: code, parameter, status and request id. */
export function describeError(error: PetServiceError): string {
  const lines = [`Error: ${error.detail ?? error.message}`]
  const facts = [
    error.code === undefined ? undefined : `code ${error.code}`,
    error.param === undefined ? undefined : `param ${error.param}`,
    error.status === undefined ? undefined : `status ${error.status}`,
    error.requestId === undefined ? undefined : `request ${error.requestId}`,
  ].filter((f) => f !== undefined)
  if (facts.length > 0) lines.push(`  (${facts.join(', ')})`)
  for (const e of error.errors ?? []) lines.push(`  - ${e.message}`)
  if (error.type?.startsWith('/problems/')) lines.push(`  see ${error.type}`)
  return lines.join('\n')
}
