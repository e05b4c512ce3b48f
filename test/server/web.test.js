import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import http from 'node:http'
import { once } from 'node:events'
import { TESTS, loadMessages, loadPayload } from '../../lib/payloads/catalog.js'
import { createWebHandler } from '../../lib/server/web.js'

const HINT = 'WebSocket clients connect to ws://HOST:PORT/?test=<n>&format=<name>'
const asked = []
let server
let port

before(async () => {
  // The server's payload source, recorded: the handler must serve what it gives.
  const handler = createWebHandler((info, options) => { asked.push(info.name); return loadMessages(info, options) }, HINT)
  server = http.createServer(handler)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  port = server.address().port
})
after(() => new Promise((resolve) => server.close(resolve)))

/** A raw request: the path goes out exactly as written (fetch would normalise `..`). */
function request (path, method = 'GET') {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method }, (response) => {
      const chunks = []
      response.on('data', (chunk) => chunks.push(chunk))
      response.on('end', () => resolve({ status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }))
    })
    req.on('error', reject)
    req.end(method === 'POST' ? 'x' : undefined)
  })
}

const ROOT = new URL('../../', import.meta.url)

test('allowlisted files are served whole, with their content type, no-store and cross-origin isolation', async () => {
  for (const [path, file, type] of [
    ['/', 'web/index.html', 'text/html; charset=utf-8'],
    ['/app.js', 'web/app.js', 'text/javascript; charset=utf-8'],
    ['/lib/report/report.js', 'lib/report/report.js', 'text/javascript; charset=utf-8'],
    ['/lib/protocol.js', 'lib/protocol.js', 'text/javascript; charset=utf-8'],
    ['/proto/medium.proto', 'proto/medium.proto', 'text/plain; charset=utf-8'],
    ['/vendor/protobuf.min.js', 'node_modules/protobufjs/dist/protobuf.min.js', 'text/javascript; charset=utf-8']
  ]) {
    const { status, headers, body } = await request(path)
    assert.equal(status, 200, path)
    assert.equal(headers['content-type'], type, path)
    assert.equal(body, fs.readFileSync(new URL(file, ROOT), 'utf8'), path)
    assert.equal(Number(headers['content-length']), Buffer.byteLength(body), path)
    assert.equal(headers['cache-control'], 'no-store', path)
    assert.equal(headers['cross-origin-opener-policy'], 'same-origin', path)
    assert.equal(headers['cross-origin-embedder-policy'], 'require-corp', path)
  }
})

test('/api/tests lists the catalog; /api/payload/<name>.json is the server\'s messages for that test, its stream or its one message', async () => {
  const tests = await request('/api/tests')
  assert.equal(tests.headers['content-type'], 'application/json')
  assert.deepEqual(JSON.parse(tests.body), JSON.parse(JSON.stringify(TESTS)))
  asked.length = 0
  const payload = await request('/api/payload/small.json?cache=1')
  assert.equal(payload.status, 200)
  assert.equal(payload.headers['cross-origin-embedder-policy'], 'require-corp')
  const small = TESTS.find((t) => t.name === 'small')
  assert.deepEqual(JSON.parse(payload.body), loadMessages(small))
  assert.equal(JSON.parse(payload.body).payload.kind, 'stream')
  const repeated = JSON.parse((await request('/api/payload/small.json?payload=repeated')).body)
  assert.deepEqual(repeated, { messages: [loadPayload(small)], payload: { kind: 'repeated', messages: 1, seed: null } })
  assert.deepEqual(asked, ['small', 'small'], 'from the source it was given')
})

test('anything else is 404 with the hint; other methods 405 with the hint', async () => {
  for (const path of ['/nope', '/api/payload/nope.json', '/api/payload/small.jsonx', '/lib/server/server.js', '/package.json', '/web/index.html', '/api/tests/']) {
    const { status, headers, body } = await request(path)
    assert.equal(status, 404, path)
    assert.equal(headers['content-type'], 'text/plain; charset=utf-8')
    assert.match(body, /^not found: \/\S*\n/, path)
    assert.ok(body.endsWith(`${HINT}\n`), path)
  }
  for (const method of ['POST', 'PUT', 'DELETE']) {
    const { status, body } = await request('/', method)
    assert.equal(status, 405, method)
    assert.equal(body, `${HINT}\n`)
  }
})

test('HEAD gives the headers of GET and no body', async () => {
  const get = await request('/app.js')
  const head = await request('/app.js', 'HEAD')
  assert.equal(head.status, 200)
  assert.equal(head.body, '')
  assert.equal(head.headers['content-length'], get.headers['content-length'])
  assert.equal(head.headers['content-type'], get.headers['content-type'])
  const missing = await request('/nope', 'HEAD')
  assert.deepEqual([missing.status, missing.body], [404, ''])
})

test('path traversal reaches nothing outside the allowlist', async () => {
  const secret = fs.readFileSync(new URL('package.json', ROOT), 'utf8')
  for (const path of ['/proto/../package.json', '/proto/../../../etc/passwd', '/proto/..%2f..%2fpackage.json', '/%2e%2e/package.json', '/proto/%2e%2e/package.json', '//etc/passwd', '/proto/medium.proto/../../package.json', '/proto\\..\\package.json']) {
    const { status, body } = await request(path)
    assert.equal(status, 404, path)
    assert.ok(!body.includes(secret.slice(0, 40)), path)
    assert.doesNotMatch(body, /root:/, path)
  }
  // A dot segment that stays inside the allowlist resolves as a browser would.
  assert.equal((await request('/lib/../proto/medium.proto')).status, 200)
})

test('the page\'s module graph loads whole from the server: every import of /app.js and on is served, or mapped by the import map', async () => {
  const page = await request('/')
  const map = JSON.parse(/<script type="importmap">(.*?)<\/script>/s.exec(page.body)[1]).imports
  const seen = new Set()
  const pending = ['/app.js']
  while (pending.length) {
    const url = pending.pop()
    if (seen.has(url)) continue
    seen.add(url)
    const { status, body } = await request(url)
    assert.equal(status, 200, `${url} is not served (imported by the page's modules)`)
    for (const [, specifier] of body.matchAll(/^\s*import\s[^'"]*?['"]([^'"]+)['"]/gm)) {
      // A bare name (a package, or node:*) loads only through the import map.
      const bare = !specifier.startsWith('/') && !specifier.startsWith('.')
      assert.ok(!bare || map[specifier], `${url} imports '${specifier}', which the page cannot load`)
      pending.push(bare ? map[specifier] : new URL(specifier, `http://page${url}`).pathname)
    }
  }
  assert.ok(seen.has('/lib/compare/results.js') && seen.size >= 10, [...seen].join(' '))
})
