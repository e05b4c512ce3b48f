// The browser client's files, served over plain HTTP on the WebSocket server's port: the page, its
// script, the few lib/ modules it shares with the CLI (report, histogram, charts), protobuf.js and
// HdrHistogram from node_modules, the schemas and the catalog. An allowlist, nothing else.
import fs from 'node:fs/promises'
import path from 'node:path'
import { createRequire } from 'node:module'
import { PROJECT_ROOT } from '../processes.js'
import { TESTS } from '../payloads/catalog.js'
import { QUERY } from '../protocol.js'

const require = createRequire(import.meta.url)
const packageFile = (spec) => require.resolve(spec)
// HdrHistogram's browser build compresses with pako, its own dependency: resolve it from there.
const pakoFile = createRequire(packageFile('hdr-histogram-js')).resolve('pako/dist/pako.min.js')

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.proto': 'text/plain; charset=utf-8', '.json': 'application/json' }

/** URL path -> file; the page imports lib/ modules by these same paths. */
const FILES = new Map([
  ['/', path.join(PROJECT_ROOT, 'web/index.html')],
  ['/app.js', path.join(PROJECT_ROOT, 'web/app.js')],
  ['/vendor/hdr-histogram-js.js', path.join(PROJECT_ROOT, 'web/hdr-histogram-js.js')],
  ['/vendor/jstat.js', path.join(PROJECT_ROOT, 'web/jstat.js')],
  ['/vendor/jstat.min.js', packageFile('jstat/dist/jstat.min.js')],
  ['/vendor/pako.min.js', pakoFile],
  ['/vendor/hdrhistogram.umd.js', packageFile('hdr-histogram-js/dist/hdrhistogram.umd.js')],
  ['/vendor/protobuf.min.js', packageFile('protobufjs/dist/protobuf.min.js')],
  ...['report/report.js', 'report/fanout.js', 'errors.js', 'histogram.js', 'display.js', 'protocol.js', 'report/svg-chart.js', 'compare/results.js', 'compare/statistics.js'].map((name) => [`/lib/${name}`, path.join(PROJECT_ROOT, 'lib', name)]),
  ...[...new Set(TESTS.map((test) => test.protoFile))].map((name) => [`/proto/${name}`, path.join(PROJECT_ROOT, 'proto', name)])
])

/**
 * Answers the browser client's GET requests; anything else gets 404 (or 405 for other methods)
 * with a hint on how to connect a WebSocket.
 * `GET /api/payload/<test>.json` answers `{ payload, messages }`: the test's stream, or its one message
 * with `?payload=repeated`, so the page sends what the CLI clients send.
 * @param {typeof import('../payloads/catalog.js').loadMessages} loadMessages the server's payload source
 * @param {string} hint one line on how to connect, for the 404 body
 * @returns {(request: import('node:http').IncomingMessage, response: import('node:http').ServerResponse) => Promise<void>}
 */
export function createWebHandler (loadMessages, hint) {
  return async (request, response) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return send(response, 405, 'text/plain; charset=utf-8', `${hint}\n`)
    const url = new URL(request.url, 'http://placeholder')
    if (url.pathname === '/api/tests') return send(response, 200, TYPES['.json'], JSON.stringify(TESTS))
    const payloadTest = /^\/api\/payload\/([\w-]+)\.json$/.exec(url.pathname)?.[1]
    const test = payloadTest && TESTS.find((t) => t.name === payloadTest)
    if (test) return send(response, 200, TYPES['.json'], JSON.stringify(loadMessages(test, { repeat: url.searchParams.get(QUERY.payload) === 'repeated' })))
    const file = FILES.get(url.pathname)
    if (!file) return send(response, 404, 'text/plain; charset=utf-8', `not found: ${url.pathname}\n${hint}\n`)
    send(response, 200, TYPES[path.extname(file)] ?? TYPES['.html'], await fs.readFile(file))
  }
}

function send (response, status, type, body) {
  response.writeHead(status, {
    'Content-Type': type,
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
    // Cross-origin isolation: browsers then give performance.now() 5 µs resolution instead of 100 µs.
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Embedder-Policy': 'require-corp'
  })
  response.end(response.req.method === 'HEAD' ? undefined : body)
}
