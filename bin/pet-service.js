#!/usr/bin/env node
// The admin CLI and server entry, run from the TypeScript sources through tsx's loader.
// `npm start` runs the same entry bundled into plain JavaScript (dist/, npm run build).
import { register } from 'tsx/esm/api'

// Packages of many JavaScript modules load before tsx's hooks are registered: the hooks see every
// module loaded after them (each one a round trip to the hooks' thread), and kysely alone is some
// 260 modules. The sources' later imports of them find them already loaded.
await Promise.all([import('kysely'), import('jose')])
register()
await import('../src/admin-cli/entry.ts')
