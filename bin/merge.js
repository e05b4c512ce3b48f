#!/usr/bin/env node
// Merges client reports from several processes or machines into one. Usage: node bin/merge.js a.json b.json [--json]
import { runMergeCli } from '../lib/cli/merge.js'
import { runMain } from '../lib/errors.js'

runMain(() => runMergeCli(process.argv))
