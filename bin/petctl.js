#!/usr/bin/env node
// petctl (cli/petctl.js), at the path the tests run it by; the command itself is linked from the
// cli workspace (cli/package.json), like pet-service.
import '../cli/petctl.js'
