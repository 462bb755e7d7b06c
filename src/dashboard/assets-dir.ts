/**
 * The folder of the dashboard's stylesheet, script and icon. Resolved next to this module: in
 * the sources that is src/dashboard/assets/; in the production bundle (dist/pet-service.js,
 * see scripts/build.ts) the build copies the folder to dist/assets/, next to the bundle.
 */
export const ASSETS_DIR = new URL('./assets/', import.meta.url)
