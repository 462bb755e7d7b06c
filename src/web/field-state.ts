import { type Html, html } from './html.ts'

/**
 * The attributes of a form control on a page answering a refused submission: the control that
 * failed (`failed`, a control's name) is marked invalid and takes the focus, so the person, or
 * their screen reader, lands where the fix goes. `autofocus` needs no script (the CSP allows no
 * inline one) and works without JavaScript. `first` gives the focus to this control when nothing
 * failed (the email of a sign-in form). For a group of checkboxes, give it to the first box.
 */
export function fieldState(name: string, failed: string | undefined, first = false): Html {
  if (failed === name) return html` aria-invalid="true" autofocus`
  return failed === undefined && first ? html` autofocus` : html``
}
