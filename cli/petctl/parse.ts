/** Flag values checked before any request, so a malformed one is a usage error (exit 2). */
import { UsageError } from './errors.ts'

export function integer(text: string, flag: string, min: number): number {
  const n = Number(text)
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`${flag} must be a whole number ≥ ${min}.`)
  return n
}

export function petId(text: string): number {
  const n = Number(text)
  if (!Number.isSafeInteger(n) || n < 1)
    throw new UsageError(`A pet id is a positive whole number, not ${text}.`)
  return n
}

export function orderId(text: string): number {
  const n = Number(text)
  if (!Number.isSafeInteger(n) || n < 1)
    throw new UsageError(`An order id is a positive whole number, not ${text}.`)
  return n
}

export function userId(text: string): string {
  if (!text.startsWith('usr_'))
    throw new UsageError(`A user id starts with usr_ (see petctl users list), not ${JSON.stringify(text)}.`)
  return text
}

export function eventId(text: string): string {
  if (!text.startsWith('evt_'))
    throw new UsageError(
      `An event id starts with evt_ (see petctl events list), not ${JSON.stringify(text)}.`,
    )
  return text
}

export function webhookEndpointId(text: string): string {
  if (!text.startsWith('we_'))
    throw new UsageError(
      `A webhook endpoint id starts with we_ (see petctl webhooks list), not ${JSON.stringify(text)}.`,
    )
  return text
}

/** A comma-separated list (`--events pet.*,user.deleted`), without empty entries. */
export function commaList(text: string): string[] {
  return text
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '')
}

/** One of `allowed`, for the flag named. */
export function oneOf<T extends string>(text: string, allowed: readonly T[], flag: string): T {
  if (!(allowed as readonly string[]).includes(text))
    throw new UsageError(`${flag} must be one of ${allowed.join(', ')}, not ${text}.`)
  return text as T
}

/** Only the flags actually given, under their API names. */
export function fields<F extends object>(
  flags: F,
  names: Partial<Record<keyof F, string>>,
): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [flag, field] of Object.entries(names)) {
    const value = flags[flag as keyof F]
    if (typeof value === 'string' && typeof field === 'string') out[field] = value
  }
  return out
}

/** Commander's parser for a repeatable flag (`--tag a --tag b`). */
export const collect = (value: string, previous: string[] = []) => [...previous, value]
