#!/usr/bin/env node
// The admin CLI and server entry, run from the TypeScript sources through tsx's loader.
// `npm start` runs the same entry bundled into plain JavaScript (dist/, npm run build).
import { register } from 'tsx/esm/api'

register()
await import('../src/admin-cli/entry.ts')
