import { execSync } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Browser, chromium, type Page } from 'playwright-core'
import { describe } from 'vitest'
import { TYPICAL_SCOPES } from '../../src/dashboard/views/scopes.ts'

/** Debian's chromium (installed by .ci/run when absent), or undefined when this machine has none. */
export function chromiumPath(): string | undefined {
  try {
    return execSync('command -v chromium', { shell: '/bin/sh', encoding: 'utf8' }).trim() || undefined
  } catch {
    return undefined
  }
}

/**
 * `describe` for a suite that drives Chromium, or `describe.skip` when this machine has no
 * Chromium. Skipped only on a developer machine without it (the reason, printed as the suite's
 * skip); CI installs it (.ci/run) and must run every browser suite, so there it never skips.
 */
export function browserSuite(executablePath: string | undefined): ReturnType<typeof describe.skipIf> {
  // Reason for the skip: no Chromium on this developer machine (CI installs it and never skips).
  return describe.skipIf(executablePath === undefined && process.env.CI !== 'true')
}

export async function launchChromium(executablePath: string, extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', ...extraArgs],
  })
}

/**
 * Screenshots go to docs/screenshots (docs/dashboard.md shows them) only when UPDATE_SCREENSHOTS=1, so
 * that running the suite leaves the checkout clean; otherwise to a temporary folder.
 */
export const SCREENSHOTS =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? fileURLToPath(new URL('../../docs/screenshots/', import.meta.url))
    : join(tmpdir(), 'pet-service-screenshots')

export async function screenshot(page: Page, name: string, { fullPage = true } = {}): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage })
}

/** Form controls on the page that have neither a <label> nor an aria-label (should be none). */
export async function unlabelledControls(page: Page): Promise<string[]> {
  // A string, since the test project is compiled without the DOM library.
  return page.evaluate(`[...document.querySelectorAll('input, select, textarea')]
    .filter((el) => el.type !== 'hidden' && !el.hidden && el.closest('[hidden]') === null)
    .filter((el) => el.labels.length === 0 && !el.getAttribute('aria-label'))
    .map((el) => el.outerHTML)`)
}

/** Ticks scope boxes of the key or OAuth app form (a new form ticks none): the typical ones by default. */
export async function tickScopes(page: Page, scopes: readonly string[] = TYPICAL_SCOPES): Promise<void> {
  for (const scope of scopes) await page.getByLabel(scope, { exact: false }).check()
}
