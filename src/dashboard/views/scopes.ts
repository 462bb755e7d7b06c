import { ALL_SCOPES, SCOPES, type Scope } from '../../access/scopes.ts'
import { fieldState } from '../../web/field-state.ts'
import { type Html, html } from '../../web/html.ts'

/**
 * The scope pieces of the dashboard's pages, written once: the checkboxes of the key form and of
 * the OAuth app form (both post `scopes`, read back by pickedScopes in ../context.ts),
 * and the badges of the tables.
 */

/** What an integration that keeps pets and their owners needs: named by the forms, never ticked for you. */
export const TYPICAL_SCOPES: readonly Scope[] = ['read:pets', 'write:pets', 'read:users', 'write:users']

/**
 * A fieldset of one checkbox per scope. A new form ticks none: a key or app gets only what its
 * holder chose (least privilege), and the hint names what a typical integration needs.
 */
export function scopeCheckboxes(input: {
  legend: string
  hint?: string
  chosen: readonly Scope[] | undefined
  /** The field a refused submission puts the focus on (`scopes`: the first box). */
  failed?: string | undefined
}): Html {
  const chosen = new Set(input.chosen ?? [])
  const typical = TYPICAL_SCOPES.map(
    (s, i) => html`${i === 0 ? '' : i === TYPICAL_SCOPES.length - 1 ? ' and ' : ', '}<code>${s}</code>`,
  )
  return html`<fieldset>
      <legend>${input.legend}</legend>
      ${input.hint === undefined ? '' : html`<p class="hint">${input.hint}</p>`}
      <p class="hint">A typical integration, one that keeps pets and their owners, needs ${typical}.</p>
      <div class="checks">
        ${ALL_SCOPES.map(
          (s, i) =>
            html`<label class="check"><input type="checkbox" name="scopes" value="${s}"${chosen.has(s) ? html` checked` : ''}${i === 0 ? fieldState('scopes', input.failed) : ''}><span><span class="mono">${s}</span><small>${SCOPES[s]}</small></span></label>`,
        )}
      </div>
    </fieldset>`
}

/** The scopes as badges; `null` (a key without a scope list) is full access. */
export function scopeBadges(scopes: readonly Scope[] | null): Html {
  if (scopes === null) return html`<span class="badge">Full access</span>`
  return html`<span class="badges">${scopes.map((s) => html`<span class="badge scope" title="${SCOPES[s]}">${s}</span>`)}</span>`
}
