#!/usr/bin/env node
// How many msgs/s one server core takes per format within a latency objective. Usage: npm run capacity -- [options]
import { runCapacityCli } from '../lib/cli/capacity.js'
import { runMain } from '../lib/errors.js'

runMain(() => runCapacityCli(process.argv))
