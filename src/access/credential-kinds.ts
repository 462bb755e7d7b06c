/**
 * The public prefix of secret API keys (src/keys/api-key-format.ts builds them): secret scanners
 * recognise leaked keys by it, and error messages may show it.
 */
export const API_KEY_PREFIX = 'pet_sk_'

/**
 * The prefix of a sandbox's keys: `pet_sk_test_`. A live key never has `_` after its prefix
 * (only base62 follows it), so neither kind can be read as the other.
 */
export const TEST_API_KEY_PREFIX = `${API_KEY_PREFIX}test_`

/**
 * What a credential sent to the wrong API is, in words that say which one to send instead:
 * v1 takes API keys, v2 OAuth access tokens. Recognised by shape only, never looked up, and
 * never echoed.
 */
export function wrongCredentialForV1(candidate: string): string | undefined {
  if (/^eyJ[\w-]*\.[\w-]*\.[\w-]*$/.test(candidate)) {
    return `This is an OAuth access token; the v1 API takes an API key (${API_KEY_PREFIX}…). Send access tokens to the /v2 API.`
  }
  const part = candidate.startsWith('pet_ci_')
    ? 'an OAuth client id'
    : candidate.startsWith('pet_cs_')
      ? 'an OAuth client secret'
      : undefined
  if (part === undefined) return undefined
  return `This is ${part}; the v1 API takes an API key (${API_KEY_PREFIX}…). Client credentials get an access token from POST /oauth/token, for the /v2 API.`
}

export function wrongCredentialForV2(token: string): string | undefined {
  if (!token.startsWith(API_KEY_PREFIX)) return undefined
  return 'This is an API key; the v2 API takes an OAuth access token as Bearer (POST /oauth/token with client credentials gives one), or the key in the api_key header where the Petstore allows it (get and delete a pet, the inventory). Bearer API keys work on /v1.'
}
