// What is the Go reference server's own (servers/go/): its command line, compare --server go, and
// bench:servers beside Node. The wire protocol it keeps is tested in conformance.test.js, which
// runs against it by default. Skipped with the reason where go is not on PATH, but in CI, where that fails.
import { describe, test } from 'node:test'
import { referenceServerUnavailable } from '../helpers.js'
import { TLS_OPTION_CASES, assertBadOptions, assertBenchServers, assertCompareOnServer, assertCompareRefusals, sharedServer } from './reference-server.js'

const unavailable = referenceServerUnavailable('go')
const shared = sharedServer('go', unavailable)

describe('go server', () => {
  test('go server, a bad option or a port already taken: one line on stderr and exit code 2', { skip: unavailable, timeout: 30_000 }, () => {
    assertBadOptions('go', [
      [['--bogus'], /^wsbench-server: flag provided but not defined: -bogus \(--help lists the options\)\n$/],
      [['--handshake-timeout', 'soon'], /^wsbench-server: --handshake-timeout must be a duration such as 10s or 500ms, got 'soon'\n$/],
      [['--port', new URL(shared.server.url).port], /^wsbench-server: cannot listen on 127\.0\.0\.1 port \d+: .*address already in use\n$/],
      ...TLS_OPTION_CASES
    ])
  })

  test('npm run compare -- --server go --tls: json and protobuf compared over wss:// on two Go server processes, every message accounted for',
    { skip: unavailable }, () => assertCompareOnServer('go'))

  test('compare --server go refuses what the Go server cannot serve, in one line', { skip: unavailable }, () => assertCompareRefusals('go'))

  test('bench:servers: node and Go side by side in one run, msgs/s and server CPU per message for each test and format',
    { skip: unavailable }, () => assertBenchServers(['node', 'go']))
})
