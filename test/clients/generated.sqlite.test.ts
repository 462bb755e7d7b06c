import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { ROOT, renderArtifacts } from '../../scripts/write-openapi.ts'
import { describeDb } from '../helpers/database.ts'

// docs/openapi.json and the TypeScript client's types are generated from the route schemas
// and committed; CI fails here when a route changed without `npm run generate`.
describeDb('generated OpenAPI document and client types', () => {
  it('are up to date with the service (else run: npm run generate)', async () => {
    const artifacts = await renderArtifacts()
    for (const [path, expected] of Object.entries(artifacts)) {
      const committed = readFileSync(join(ROOT, path), 'utf8')
      const firstDifference = [...expected].findIndex((c, i) => committed[i] !== c)
      const context =
        firstDifference === -1 ? '' : expected.slice(Math.max(0, firstDifference - 80), firstDifference + 80)
      expect(committed === expected, `${path} is stale; run \`npm run generate\`. Near: ${context}`).toBe(
        true,
      )
    }
  })
})
