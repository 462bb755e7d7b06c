#!/usr/bin/env node
// petctl, the Pet Service command line, built on the TypeScript client (clients/typescript).
// The sources are TypeScript, run through tsx's loader, so no build step is needed.
import { register } from 'tsx/esm/api'

register()
const { main } = await import('./petctl/main.ts')
await main(process.argv.slice(2))
