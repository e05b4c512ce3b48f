// Process-level: the json-validated format on the real server and clients. A wrongly typed message
// is refused as protobuf refuses a wrong wire type (plain json takes it); valid traffic flows in
// every direction, fan-out included, and for a user's payload through its registered schema.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { openConnection, runScript, startServerProcess } from '../helpers.js'
import { loadMessages, resolveTest } from '../../lib/payloads/catalog.js'

test('json-validated on a real server: a wrongly typed message gets ERR where json ACKs it; valid traffic flows up, down, echo, fan-out and with a payload of your own', async () => {
  const server = await startServerProcess()
  try {
    const valid = JSON.stringify(loadMessages(resolveTest(3)).messages[0])
    const validated = await openConnection(`${server.url}/?test=3&format=json-validated`)
    validated.ws.send('{"orderId":5}')
    assert.equal(await validated.nextReply(), 'ERR json-validated decode failed for test medium: $.orderId: must be string, got number 5')
    validated.ws.send(valid)
    assert.equal(await validated.nextReply(), 'ACK', 'the connection goes on after a refusal')
    validated.ws.close()
    const plain = await openConnection(`${server.url}/?test=3&format=json`)
    plain.ws.send('{"orderId":5}')
    assert.equal(await plain.nextReply(), 'ACK', 'JSON.parse takes it')
    plain.ws.close()

    for (const args of [
      ['3', '200'],
      ['4', '50', '--direction', 'down'],
      ['person', '200', '--direction', 'echo'],
      ['3', '--direction', 'fanout', '--connections', '5', '--rate', '50', '--duration', '1s'],
      ['--payload', 'test/fixtures/infer/api-response.json', '100']
    ]) {
      const run = await runScript('client.js', ['--format', 'json-validated', ...args, '--url', server.url, '--json'])
      assert.equal(run.code, 0, `${args.join(' ')}: ${run.stderr}`)
      const report = JSON.parse(run.stdout)
      assert.equal(report.format, 'json-validated')
      if (report.fanout) assert.equal(report.fanout.delivered, report.fanout.expected, args.join(' '))
      else assert.equal(report.messages.errors + report.messages.lost, 0, args.join(' '))
    }
    await server.stop()
    assert.match(server.output(), /, 1 decode errors, .* 0 refused schemas/, 'the one refusal counted; the payload\'s schema registered')
  } finally {
    await server.stop()
  }
})
