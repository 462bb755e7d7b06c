/**
 * The folder of the web kit's stylesheet, script and icon (the dashboard's and the OAuth pages').
 * Resolved next to this module: in the sources that is src/web/assets/; in the production bundle (dist/pet-service.js,
 * see scripts/build.ts) the build copies the folder to dist/assets/, next to the bundle.
 */
export const ASSETS_DIR = new URL('./assets/', import.meta.url)
