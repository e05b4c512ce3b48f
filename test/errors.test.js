import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { UsageError, runMain } from '../lib/errors.js'

describe('UsageError', () => {
  test('is an Error named UsageError, with the message as given', () => {
    const err = new UsageError("--port must be a whole number >= 0, got 'abc'")
    assert.ok(err instanceof Error)
    assert.ok(err instanceof UsageError)
    assert.equal(err.name, 'UsageError')
    assert.equal(err.message, "--port must be a whole number >= 0, got 'abc'")
    assert.match(err.stack, /^UsageError: --port must/)
  })
})

describe('runMain', () => {
  // runMain is fire-and-forget: it calls main() and attaches its handlers with .then() before it
  // returns. Reactions to one promise run in the order they were registered, so awaiting the very
  // promise main returned (registered after runMain's) resumes only once runMain's handler has
  // run: deterministic, no timers or extra ticks counted. stderr's string writes are captured,
  // and process.exitCode, stderr.write and DEBUG are restored in finally.
  async function runMainWith (settled, { debug } = {}) {
    const saved = { exitCode: process.exitCode, write: process.stderr.write, debug: process.env.DEBUG }
    let stderr = ''
    process.stderr.write = function (chunk, ...rest) {
      if (typeof chunk !== 'string') return saved.write.call(this, chunk, ...rest)
      stderr += chunk
      return true
    }
    if (debug) process.env.DEBUG = debug
    else delete process.env.DEBUG
    try {
      process.exitCode = undefined
      const returned = runMain(() => settled)
      assert.equal(returned, undefined)
      assert.equal(process.exitCode, undefined, 'nothing is set before main settles')
      await settled.catch(() => {})
      return { exitCode: process.exitCode, stderr }
    } finally {
      process.stderr.write = saved.write
      process.exitCode = saved.exitCode
      if (saved.debug === undefined) delete process.env.DEBUG
      else process.env.DEBUG = saved.debug
    }
  }

  test('the code main resolves to becomes the exit code', async () => {
    assert.deepEqual(await runMainWith(Promise.resolve(3)), { exitCode: 3, stderr: '' })
    assert.deepEqual(await runMainWith(Promise.resolve(1)), { exitCode: 1, stderr: '' })
  })

  test('no code means 0', async () => {
    assert.deepEqual(await runMainWith(Promise.resolve()), { exitCode: 0, stderr: '' })
  })

  test('a UsageError: its message alone on stderr, exit 2', async () => {
    assert.deepEqual(await runMainWith(Promise.reject(new UsageError('unknown test \'9\''))), { exitCode: 2, stderr: 'unknown test \'9\'\n' })
  })

  test('any other error: "error: " and its message, no stack trace, exit 1', async () => {
    assert.deepEqual(await runMainWith(Promise.reject(new Error('connect ECONNREFUSED'))), { exitCode: 1, stderr: 'error: connect ECONNREFUSED\n' })
  })

  test('a rejection that is not an Error is printed as it is', async () => {
    // eslint-disable-next-line prefer-promise-reject-errors
    assert.deepEqual(await runMainWith(Promise.reject('plain text')), { exitCode: 1, stderr: 'error: plain text\n' })
  })

  test('with DEBUG set, an unexpected error also prints its stack; a UsageError never does', async () => {
    const err = new Error('boom')
    assert.deepEqual(await runMainWith(Promise.reject(err), { debug: '1' }), { exitCode: 1, stderr: `error: boom\n${err.stack}\n` })
    assert.deepEqual(await runMainWith(Promise.reject(new UsageError('bad option')), { debug: '1' }), { exitCode: 2, stderr: 'bad option\n' })
  })
})
