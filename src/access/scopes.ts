/** OAuth scopes (the Petstore's names for pets); API keys may be restricted to them too. */
export const SCOPES = {
  'read:pets': 'Read your pets',
  'write:pets': 'Create, change and delete your pets',
  'read:users': 'Read your users (pet owners)',
  'write:users': 'Create, change and delete your users',
  'read:orders': 'Read your store orders',
  'write:orders': 'Place, change and delete your store orders',
  'read:events': 'Read the events of your account (what changed, and when)',
  'read:webhooks': 'Read your webhook endpoints and their delivery log',
  'write:webhooks': 'Create, change, delete and test your webhook endpoints',
  'read:request_logs': 'Read the request logs of your account (the API requests made, and their answers)',
} as const

export type Scope = keyof typeof SCOPES

export const ALL_SCOPES = Object.keys(SCOPES) as Scope[]

export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPES, value)
}

/** Parses a space- or comma-separated scope list; returns the unknown names as well. */
export function parseScopes(text: string): { scopes: Scope[]; unknown: string[] } {
  const names = text.split(/[\s,]+/).filter((s) => s !== '')
  return {
    scopes: [...new Set(names.filter(isScope))],
    unknown: names.filter((s) => !isScope(s)),
  }
}
