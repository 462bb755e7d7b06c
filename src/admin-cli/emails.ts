import { isEmail } from '../accounts/accounts-service.ts'
import { UsageError } from './cli-io.ts'

export function requireEmail(value: string | undefined, flag: string): string {
  if (value === undefined) throw new UsageError(`${flag} EMAIL is required (add --help for usage).`)
  if (!isEmail(value)) throw new UsageError(`${flag} must be an email address, not ${value}.`)
  return value
}
