import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

const read = (file: string) => JSON.parse(readFileSync(new URL(`../${file}`, import.meta.url), 'utf8'))

/**
 * npm runs a dependency's install script only when package.json `allowScripts` approves it; one
 * nobody reviewed, npm 11 warns about and runs (swagger-client's `@scarf/scarf` reported every
 * install to its vendor), and CI's `npm ci --strict-allow-scripts` fails on it instead. This keeps
 * the lock file and the list in step, whatever npm's version does.
 */
describe('install scripts of dependencies', () => {
  it('are each approved or denied by name in package.json allowScripts', () => {
    const allowed = read('package.json').allowScripts as Record<string, boolean>
    const lock = read('package-lock.json').packages as Record<string, { hasInstallScript?: boolean }>
    const withScripts = Object.entries(lock)
      .filter(([path, entry]) => path.includes('node_modules/') && entry.hasInstallScript === true)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length))
    expect(withScripts.length).toBeGreaterThan(0)
    expect(withScripts.filter((name) => typeof allowed[name] !== 'boolean')).toEqual([])
    expect(allowed['@scarf/scarf']).toBe(false)
  })
})
