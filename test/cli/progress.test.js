import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { createProgress } from '../../lib/cli/progress.js'

// A real writable stream that keeps what it is given; isTTY as a terminal's stderr has it.
function terminal (isTTY) {
  const chunks = []
  const stream = new Writable({ write (chunk, encoding, done) { chunks.push(chunk.toString()); done() } })
  stream.isTTY = isTTY
  return { stream, chunks }
}

const tick = (acked, elapsedMs, extra = {}) => ({ sent: acked, acked, errors: 0, lost: 0, elapsedMs, p99: 1.2345, ...extra })

test('writes nothing, and returns nothing, when the stream is not a terminal (pipes and logs stay clean)', () => {
  for (const isTTY of [undefined, false]) {
    const { stream, chunks } = terminal(isTTY)
    assert.equal(createProgress(stream), undefined)
    assert.deepEqual(chunks, [])
  }
})

test('on a terminal, rewrites one line per update: elapsed, acked, rate since the last update, p99, errors, lost', () => {
  const { stream, chunks } = terminal(true)
  const progress = createProgress(stream)
  progress.update(tick(1500, 1000))
  progress.update(tick(4000, 2000, { errors: 2, lost: 1, p99: 12 }))
  assert.deepEqual(chunks, [
    '\r\x1b[K1 s  1,500 acked  1,500 msg/s  p99 1.234 ms  0 errors  0 lost',
    '\r\x1b[K2 s  4,000 acked  2,500 msg/s  p99 12.000 ms  2 errors  1 lost'
  ])
})

test('done clears the line', () => {
  const { stream, chunks } = terminal(true)
  const progress = createProgress(stream)
  progress.update(tick(10, 1000))
  progress.done()
  assert.equal(chunks.at(-1), '\r\x1b[K')
  assert.equal(chunks.length, 2)
})

test('update works detached from its object, as the engine calls it (onTick: progress.update)', () => {
  const { stream, chunks } = terminal(true)
  const { update } = createProgress(stream)
  update(tick(7, 499))
  assert.deepEqual(chunks, ['\r\x1b[K0 s  7 acked  7 msg/s  p99 1.234 ms  0 errors  0 lost'])
})
