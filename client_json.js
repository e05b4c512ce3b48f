#!/usr/bin/env node
// Load client that sends JSON text frames. Usage: node client_json.js <test> [messages] [options]
import { runClientCli } from './lib/cli/client.js'
import { runMain } from './lib/errors.js'

runMain(() => runClientCli('json', process.argv))
