#!/usr/bin/env node
// petctl (see cli/petctl.js): the repo's bin, for `npm link` and `npm install -g .`.
import '../cli/petctl.js'
