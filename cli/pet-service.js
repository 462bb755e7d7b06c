#!/usr/bin/env node
// pet-service, the admin CLI (bin/pet-service.js), linked by this workspace into
// node_modules/.bin, where `npx pet-service` finds it at once in the clone; `npm install -g ./cli`
// puts it on the PATH with petctl.
import '../bin/pet-service.js'
