#!/usr/bin/env node
// The admin CLI and server entry. The sources are TypeScript, run through tsx's loader.
import { register } from 'tsx/esm/api'

register()
const { main } = await import('../src/cli/main.ts')
await main(process.argv.slice(2))
