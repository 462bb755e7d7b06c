import { createRequire } from 'node:module'
import type { ZxcvbnFactory } from '@zxcvbn-ts/core'

/**
 * The strength check of sign-up, change-password and `pet-service accounts set-password`.
 * Length first (NIST SP 800-63B §5.1.1.2: at least 10 characters, up to 200), then zxcvbn-ts,
 * a realistic estimator that knows ~49k common passwords, English words, names and Wikipedia
 * terms, keyboard walks, dates, repeats and l33t spellings: "Password1!" or "Summer2024!"
 * meet any character-class rule and still fall to a dictionary attack in seconds.
 * The browser's meter (assets/dashboard.js) only hints; this verdict is the one that counts.
 */
export const MIN_PASSWORD_LENGTH = 10
export const MAX_PASSWORD_LENGTH = 200
/** zxcvbn's score 3: "safely unguessable" — about 10^8 guesses or more. */
const MIN_SCORE = 3

export type StrengthVerdict = { ok: true; score: number } | { ok: false; score: number; reason: string }

let estimator: ZxcvbnFactory | undefined

/**
 * Built on first use: the dictionaries cost much memory and a noticeable pause to load, which a
 * service that never sees a sign-up need not pay. Loaded with require so that the check stays
 * synchronous for its callers.
 */
function zxcvbn(): ZxcvbnFactory {
  if (estimator !== undefined) return estimator
  const require = createRequire(import.meta.url)
  const core = require('@zxcvbn-ts/core') as typeof import('@zxcvbn-ts/core')
  const common = require('@zxcvbn-ts/language-common') as typeof import('@zxcvbn-ts/language-common')
  const en = require('@zxcvbn-ts/language-en') as typeof import('@zxcvbn-ts/language-en')
  estimator = new core.ZxcvbnFactory({
    dictionary: { ...common.dictionary, ...en.dictionary },
    graphs: common.adjacencyGraphs,
    translations: en.translations,
  })
  return estimator
}

export function checkPasswordStrength(password: string, email: string): StrengthVerdict {
  if (password.length < MIN_PASSWORD_LENGTH) {
    return { ok: false, score: 0, reason: `Use at least ${MIN_PASSWORD_LENGTH} characters.` }
  }
  if (password.length > MAX_PASSWORD_LENGTH) {
    return { ok: false, score: 0, reason: `Use at most ${MAX_PASSWORD_LENGTH} characters.` }
  }
  const local = email.split('@')[0]?.toLowerCase() ?? ''
  if (local.length >= 4 && password.toLowerCase().includes(local)) {
    return { ok: false, score: 0, reason: 'Your password must not contain your email address.' }
  }
  const result = zxcvbn().check(password, [email, local, 'pet service', 'petservice', 'dashboard'])
  if (result.score >= MIN_SCORE) return { ok: true, score: result.score }
  const { warning, suggestions } = result.feedback
  return {
    ok: false,
    score: result.score,
    reason: [
      'Too easy to guess.',
      warning ?? '',
      suggestions.length > 0 ? suggestions.join(' ') : 'Add another word or two that are not related.',
    ]
      .filter((part) => part !== '')
      .join(' '),
  }
}
