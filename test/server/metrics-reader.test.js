import { test } from 'node:test'
import assert from 'node:assert/strict'
import { parseMetrics, readMetrics } from '../../lib/server/metrics-reader.js'
import { startServer } from '../../lib/server/server.js'
import { throwawayCertificate } from '../../lib/server/tls.js'
import { openConnection } from '../helpers.js'

const TEXT = `# TYPE wsbench_messages_total counter
wsbench_messages_total{format="json",test="small"} 7
wsbench_messages_total{format="protobuf",test="small"} 3
wsbench_messages_total{format="json",test="medium"} 2
# TYPE wsbench_protocol_errors_total counter
wsbench_protocol_errors_total 40.0
`

test('parseMetrics: a sample by its labels, every sample summed, nothing where there is none', () => {
  const metrics = parseMetrics(TEXT)
  assert.equal(metrics.value('wsbench_messages_total', { format: 'protobuf', test: 'small' }), 3)
  assert.equal(metrics.value('wsbench_messages_total', { format: 'json' }), 7, 'the first sample with the labels asked for')
  assert.equal(metrics.sum('wsbench_messages_total'), 12)
  assert.equal(metrics.sum('wsbench_messages_total', { format: 'json' }), 9)
  assert.equal(metrics.samples('wsbench_messages_total', { test: 'small' }).length, 2)
  assert.equal(metrics.value('wsbench_protocol_errors_total'), 40, 'a float, as Java\'s client writes it')
  assert.equal(metrics.value('wsbench_messages_total', { format: 'avro' }), undefined)
  assert.equal(metrics.value('wsbench_nothing_total'), undefined)
  assert.equal(metrics.sum('wsbench_nothing_total'), 0)
})

test('readMetrics: CPU seconds and the messages of one format and test from a real server\'s /metrics', async () => {
  const server = await startServer({ port: 0 })
  try {
    const before = await readMetrics(server.url)
    assert.equal(before.value('wsbench_messages_total', { format: 'json', test: 'small' }), undefined)
    const { ws, nextReply } = await openConnection(`${server.url}/?test=small&format=json`)
    for (let i = 0; i < 20; i++) {
      ws.send('{"id":1,"status":"ok"}')
      await nextReply()
    }
    ws.close()
    const after = await readMetrics(server.url)
    assert.equal(after.value('wsbench_messages_total', { format: 'json', test: 'small' }), 20)
    assert.ok(after.value('process_cpu_seconds_total') > 0)
    assert.equal(after.value('wsbench_messages_total', { format: 'protobuf', test: 'small' }), undefined, 'another format counts apart')
  } finally {
    await server.close()
  }
})

test('readMetrics: over https from a wss:// server, trusting its certificate; anything but a 200 is an error', async () => {
  const certificate = await throwawayCertificate()
  const server = await startServer({ port: 0, tls: certificate })
  const guarded = await startServer({ port: 0, token: 's3cret' })
  try {
    assert.match(server.url, /^wss:/)
    assert.ok((await readMetrics(server.url, { ca: certificate.cert })).value('process_cpu_seconds_total') > 0)
    await assert.rejects(readMetrics(server.url), /self-signed|unable to verify|certificate/i)
    await assert.rejects(readMetrics(guarded.url), /^Error: http:\/\/127\.0\.0\.1:\d+\/metrics answered 401$/)
  } finally {
    await server.close()
    await guarded.close()
  }
})
