// startBrokerProcess (lib/server/broker-process.js): real redis-server and nats-server, where installed.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import net from 'node:net'
import { once } from 'node:events'
import { brokerProgram, startBrokerProcess } from '../../lib/server/broker-process.js'
import { brokerUnavailable } from '../helpers.js'

describe('startBrokerProcess', () => {
  for (const kind of ['redis', 'nats']) {
    test(`${kind}: answers on a free port, keeps nothing on disk, and leaves no process once stopped`, { skip: brokerUnavailable(kind) }, async () => {
      const before = fs.readdirSync(os.tmpdir())
      const broker = await startBrokerProcess(kind)
      assert.equal(broker.kind, kind)
      assert.match(broker.url, new RegExp(`^${kind}://127\\.0\\.0\\.1:\\d+$`))
      // Both greet a new connection (nats) or answer PING (redis) at once.
      const socket = net.connect(Number(new URL(broker.url).port), '127.0.0.1')
      socket.end(kind === 'redis' ? 'PING\r\n' : '')
      const [greeting] = await once(socket.setEncoding('utf8'), 'data')
      assert.match(greeting, kind === 'redis' ? /^\+PONG\r\n$/ : /^INFO \{/)
      socket.destroy()
      const { pid } = broker.process
      await broker.stop()
      assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' })
      assert.deepEqual(fs.readdirSync(os.tmpdir()).filter((entry) => !before.includes(entry) && entry.startsWith('wsbench-')), [])
      await broker.stop() // twice is harmless
    })
  }

  test('a program that is not installed: one line that says how to install it', { skip: brokerProgram('redis') !== '/usr/bin/redis-server' && 'redis-server is not Debian\'s here' }, async (t) => {
    const path = process.env.PATH
    t.after(() => { process.env.PATH = path })
    process.env.PATH = ''
    assert.equal(brokerProgram('redis'), null)
    await assert.rejects(startBrokerProcess('redis'), { message: 'redis-server not found: apt-get install redis-server' })
  })
})
