import { test } from 'node:test'
import assert from 'node:assert/strict'
import { formatLabels, scrapeServer } from '../../lib/compare/runner.js'
import { startServer } from '../../lib/server/server.js'
import { openConnection } from '../helpers.js'

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
