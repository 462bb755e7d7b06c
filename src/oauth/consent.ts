import type Provider from 'oidc-provider'
import { isScope, type Scope } from '../access/scopes.ts'

/** An authorization request paused at a sign-in or consent prompt (oidc-provider "interaction"). */
export type InteractionDetails = Awaited<ReturnType<Provider['interactionDetails']>>

/** The scopes the consent page asks for: those the prompt misses, else those requested. */
export function requestedScopes(interaction: InteractionDetails): Scope[] {
  const missing = (interaction.prompt.details as { missingResourceScopes?: Record<string, string[]> })
    .missingResourceScopes
  const fromPrompt = Object.values(missing ?? {}).flat()
  const names = fromPrompt.length > 0 ? fromPrompt : String(interaction.params.scope ?? '').split(' ')
  return [...new Set(names.filter(isScope))]
}

/**
 * Records the account holder's consent: the interaction's grant (or a new one) gains what the
 * prompt says is missing. Returns the grant's id, for the interaction's result.
 */
export async function grantConsent(
  provider: Provider,
  interaction: InteractionDetails,
  accountId: string,
): Promise<string> {
  const clientId = String(interaction.params.client_id)
  const grant =
    (interaction.grantId === undefined ? undefined : await provider.Grant.find(interaction.grantId)) ??
    new provider.Grant({ accountId, clientId })
  const missing = interaction.prompt.details as {
    missingOIDCScope?: string[]
    missingResourceScopes?: Record<string, string[]>
  }
  if (missing.missingOIDCScope !== undefined) grant.addOIDCScope(missing.missingOIDCScope.join(' '))
  for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(resource, scopes.join(' '))
  }
  return grant.save()
}
