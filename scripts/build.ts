// npm run build: the service and its admin CLI as one ES module, dist/pet-service.js, which
// `npm start` runs. Running the TypeScript sources through tsx's loader costs about 50 MB of
// memory for as long as the process lives (the loader's own thread, the transform); the bundle
// is plain JavaScript. Packages stay in node_modules (not bundled); the web kit's assets (stylesheet, script, icon) are
// copied next to the bundle, where src/web/assets-dir.ts finds them.
import { cpSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { NODE_BUNDLE } from './bundle-options.ts'

const path = (relative: string) => fileURLToPath(new URL(`../${relative}`, import.meta.url))
// One level below the repository, like src/: the bundle finds package.json and node_modules as
// the sources do.
const outdir = path('dist')

rmSync(outdir, { recursive: true, force: true })
await build({
  entryPoints: [path('src/admin-cli/entry.ts')],
  outfile: join(outdir, 'pet-service.js'),
  ...NODE_BUNDLE,
})
cpSync(path('src/web/assets'), join(outdir, 'assets'), { recursive: true })
