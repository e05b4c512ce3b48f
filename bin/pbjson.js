#!/usr/bin/env node
// pbjson: infer a lossless .proto from a JSON document or corpus, or check that a .proto carries it unchanged.
import { runPbjsonCli } from '../lib/cli/pbjson.js'
import { runMain } from '../lib/errors.js'

runMain(() => runPbjsonCli(process.argv))
