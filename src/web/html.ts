/**
 * A tiny HTML templating kit: `html` is a tagged template that escapes every interpolated value
 * unless it is already `Html` (the output of another `html` call or of `raw`). Arrays are joined;
 * null, undefined and false render as nothing. Escaping by default is what keeps user data
 * (pet names, key labels) from becoming markup.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value
  }
}

export type Renderable = Html | string | number | null | undefined | false | readonly Renderable[]

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c)
}

function render(value: Renderable): string {
  if (value === null || value === undefined || value === false) return ''
  if (value instanceof Html) return value.value
  if (Array.isArray(value)) return value.map(render).join('')
  return escapeHtml(String(value))
}

export function html(strings: TemplateStringsArray, ...values: Renderable[]): Html {
  let out = strings[0] ?? ''
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '')
  return new Html(out)
}

/** Trusted markup, inserted as is. Never pass user data. */
export function raw(markup: string): Html {
  return new Html(markup)
}
