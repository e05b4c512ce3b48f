#!/usr/bin/env node
// Load client that sends protobuf binary frames. Usage: node client_protobuf.js <test> [messages] [options]
import { runClientCli } from './lib/cli/client.js'
import { runMain } from './lib/errors.js'

runMain(() => runClientCli('protobuf', process.argv))
