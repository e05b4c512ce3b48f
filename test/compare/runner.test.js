import { test } from 'node:test'
import assert from 'node:assert/strict'
import { formatLabels, runLength, scrapeServer } from '../../lib/compare/runner.js'
import { DEFAULT_MESSAGES, DEFAULT_WARMUP } from '../../lib/defaults.js'
import { ALL_TESTS, loadPayload, resolveTest } from '../../lib/payloads/catalog.js'
import { startServer } from '../../lib/server/server.js'
import { openConnection } from '../helpers.js'

test('runLength: defaults capped by bytes for big payloads, explicit counts honoured', () => {
  const peopleBytes = Buffer.byteLength(JSON.stringify(loadPayload(resolveTest('people'))))
  assert.deepEqual(runLength(22, {}), { messages: DEFAULT_MESSAGES, warmup: DEFAULT_WARMUP })
  assert.deepEqual(runLength(peopleBytes, {}), { messages: 10, warmup: 1 }, '64 MiB / 12.85 MB per message, at least 10')
  assert.deepEqual(runLength(peopleBytes, { messages: 3, warmup: 0 }), { messages: 3, warmup: 0 })
  assert.deepEqual(ALL_TESTS, ['numbers', 'strings', 'medium', 'large', 'small', 'people', 'person', 'counters'])
})

test('formatLabels: a format named twice (an A/A run) gets #2 on its second column', () => {
  assert.deepEqual(formatLabels(['json', 'protobuf']), ['json', 'protobuf'])
  assert.deepEqual(formatLabels(['json', 'json']), ['json', 'json#2'])
  assert.deepEqual(formatLabels(['json', 'protobuf', 'json', 'json']), ['json', 'protobuf', 'json#2', 'json#3'])
})

test('scrapeServer: CPU seconds and the messages of one format and test from a real /metrics', async () => {
  const server = await startServer({ port: 0 })
  const url = `${server.url.replace('ws:', 'http:')}/metrics`
  try {
    const before = await scrapeServer(url, 'json', 'small')
    assert.equal(before.messages, 0)
    const { ws, nextReply } = await openConnection(`${server.url}/?test=small&format=json`)
    for (let i = 0; i < 20; i++) {
      ws.send('{"id":1,"status":"ok"}')
      await nextReply()
    }
    ws.close()
    const after = await scrapeServer(url, 'json', 'small')
    assert.equal(after.messages, 20)
    assert.ok(after.cpuSeconds >= before.cpuSeconds && after.cpuSeconds > 0)
    assert.equal((await scrapeServer(url, 'protobuf', 'small')).messages, 0, 'another format counts apart')
    await assert.rejects(scrapeServer(`${server.url.replace('ws:', 'http:')}/nope`, 'json', 'small'), /answered 404/)
  } finally {
    await server.close()
  }
})
