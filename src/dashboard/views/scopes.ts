import { ALL_SCOPES, SCOPES, type Scope } from '../../access/scopes.ts'
import { type Html, html } from '../../web/html.ts'

/**
 * The scope pieces of the dashboard's pages, written once: the checkboxes of the key form and of
 * the OAuth app form (both post `scopes`, read back by pickedScopes in ../context.ts),
 * and the badges of the tables.
 */

/** A fieldset of one checkbox per scope; all ticked when the form is new. */
export function scopeCheckboxes(input: {
  legend: string
  hint?: string
  chosen: readonly Scope[] | undefined
}): Html {
  const chosen = new Set(input.chosen ?? ALL_SCOPES)
  return html`<fieldset>
      <legend>${input.legend}</legend>
      ${input.hint === undefined ? '' : html`<p class="hint">${input.hint}</p>`}
      <div class="checks">
        ${ALL_SCOPES.map(
          (s) =>
            html`<label class="check"><input type="checkbox" name="scopes" value="${s}"${chosen.has(s) ? html` checked` : ''}><span><span class="mono">${s}</span><small>${SCOPES[s]}</small></span></label>`,
        )}
      </div>
    </fieldset>`
}

/** The scopes as badges; `null` (a key without a scope list) is full access. */
export function scopeBadges(scopes: readonly Scope[] | null): Html {
  if (scopes === null) return html`<span class="badge">Full access</span>`
  return html`<span class="badges">${scopes.map((s) => html`<span class="badge scope" title="${SCOPES[s]}">${s}</span>`)}</span>`
}
