// The process entry of `pet-service` (bin/pet-service.js runs it from the sources, `npm start`
// from the bundle in dist/).
import { main } from './main.ts'

await main(process.argv.slice(2))
