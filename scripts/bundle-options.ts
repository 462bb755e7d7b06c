import type { BuildOptions } from 'esbuild'

/**
 * How this repository bundles a Node program (the service in scripts/build.ts, the bench's peer
 * in bench/service.ts): one ES module of our code, packages left in node_modules, for the
 * oldest Node line `engines` names.
 */
export const NODE_BUNDLE: BuildOptions = {
  bundle: true,
  packages: 'external',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'warning',
}
