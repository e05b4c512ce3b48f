#!/usr/bin/env node
// The main job: JSON vs protobuf (or the --formats chosen) on an embedded server, side by side. Usage: npm run compare -- [options]
import { runCompareCli } from '../lib/cli/compare.js'
import { runMain } from '../lib/errors.js'

runMain(() => runCompareCli(process.argv))
