#!/usr/bin/env node
// A standalone shaping TCP proxy. Usage: node bin/shaping-proxy.js --listen 7071 --target 127.0.0.1:7070 --throttle 3g
import { runShapingProxyCli } from '../lib/cli/proxy.js'
import { runMain } from '../lib/errors.js'

runMain(() => runShapingProxyCli(process.argv))
