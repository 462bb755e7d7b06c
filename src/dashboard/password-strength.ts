/**
 * The sign-up and change-password strength check (the same rules run in the browser, in
 * assets/dashboard.js, to show a meter as you type; the server's verdict is the one that counts).
 * Length matters most (NIST SP 800-63B §5.1.1.2): at least 10 characters, not a well-known
 * password, not the email, not one character repeated or a run like "1234567890".
 */
export const MIN_PASSWORD_LENGTH = 10
export const MAX_PASSWORD_LENGTH = 200

const COMMON = new Set([
  'password',
  'password1',
  'password12',
  'password123',
  'password1234',
  'passw0rd',
  'p@ssw0rd',
  'qwertyuiop',
  'qwerty123',
  'qwerty1234',
  '1q2w3e4r5t',
  '1qaz2wsx3edc',
  'iloveyou',
  'iloveyou1',
  'letmein123',
  'welcome123',
  'admin12345',
  'administrator',
  'sunshine123',
  'football123',
  'baseball123',
  'princess123',
  'dragon1234',
  'monkey1234',
  'trustno1',
  'changeme',
  'changeme123',
  'petservice',
  'petservice1',
  'mypassword',
  'secret1234',
  'abcdefghij',
  'abc1234567',
  'aaaaaaaaaa',
])

export type StrengthVerdict = { ok: true; score: number } | { ok: false; score: number; reason: string }

/** Rough guess of strength, 0–4, from length and variety (what the meter shows). */
export function strengthScore(password: string): number {
  let classes = 0
  for (const re of [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/]) if (re.test(password)) classes++
  const unique = new Set(password).size
  let score = 0
  if (password.length >= MIN_PASSWORD_LENGTH) score++
  if (password.length >= 14) score++
  if (password.length >= 18 || classes >= 3) score++
  if (unique >= 8 && (classes >= 3 || password.length >= 20)) score++
  return score
}

function isRun(password: string): boolean {
  const lower = password.toLowerCase()
  if (new Set(lower).size <= 2) return true
  const sequences = [
    '0123456789012345678901234567890',
    'abcdefghijklmnopqrstuvwxyz',
    'qwertyuiopasdfghjklzxcvbnm',
  ]
  return sequences.some((s) => s.includes(lower) || [...s].reverse().join('').includes(lower))
}

export function checkPasswordStrength(password: string, email: string): StrengthVerdict {
  const score = strengthScore(password)
  if (password.length < MIN_PASSWORD_LENGTH) {
    return { ok: false, score, reason: `Use at least ${MIN_PASSWORD_LENGTH} characters.` }
  }
  if (password.length > MAX_PASSWORD_LENGTH) {
    return { ok: false, score, reason: `Use at most ${MAX_PASSWORD_LENGTH} characters.` }
  }
  const lower = password.toLowerCase()
  if (COMMON.has(lower))
    return { ok: false, score: 0, reason: 'This is a well-known password; choose another.' }
  if (isRun(password)) {
    return { ok: false, score: 0, reason: 'Avoid repeated characters and simple runs like 1234567890.' }
  }
  const local = email.split('@')[0]?.toLowerCase() ?? ''
  if (local.length >= 4 && lower.includes(local)) {
    return { ok: false, score: 0, reason: 'Your password must not contain your email address.' }
  }
  if (score < 2) {
    return {
      ok: false,
      score,
      reason:
        'Too easy to guess: make it longer (a few unrelated words work well) or mix in digits and symbols.',
    }
  }
  return { ok: true, score }
}
