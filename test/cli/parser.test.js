import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { UsageError } from '../../lib/errors.js'
import {
  PAYLOAD_OPTIONS, commaList, commandLine, duration, hostAndPort, parseWsUrl, payloadFiles, positiveNumber, wholeNumber
} from '../../lib/cli/parser.js'

// A UsageError with exactly this one-line message.
const usage = (message) => (err) => {
  assert.ok(err instanceof UsageError, `expected a UsageError, got ${err?.name}: ${err?.message}`)
  assert.equal(err.message, message)
  assert.ok(!err.message.includes('\n'), 'one line')
  return true
}

describe('commandLine', () => {
  // async: the fail handler throws from inside parseAsync() itself, before it returns a promise.
  const parse = async (args, configure = (y) => y) => configure(commandLine(['node', 'script.js', ...args], 'Usage: script')).parseAsync()

  test('parses options after dropping node and the script name', async () => {
    const args = await parse(['--count', '3', 'extra'], (y) => y.command('$0 [word]', false).options({ count: { type: 'number' } }))
    assert.equal(args.count, 3)
    assert.equal(args.word, 'extra')
  })

  test('is strict: an unknown option is one UsageError line pointing at --help', async () => {
    await assert.rejects(parse(['--nope']), usage('Unknown argument: nope (see --help)'))
  })

  test('puts yargs\' multi-line messages (invalid choices) on one line', async () => {
    const options = (y) => y.options({ colour: { choices: ['red', 'blue'] } })
    await assert.rejects(parse(['--colour', 'green'], options),
      usage('Invalid values: Argument: colour, Given: "green", Choices: "red", "blue" (see --help)'))
  })

  test('reports a missing required option', async () => {
    const options = (y) => y.options({ target: { type: 'string', demandOption: true } })
    await assert.rejects(parse([], options), usage('Missing required argument: target (see --help)'))
  })

  test('passes a UsageError thrown by a check through unchanged', async () => {
    const check = (y) => y.check(() => { throw new UsageError('mine, as written') })
    await assert.rejects(parse([], check), usage('mine, as written'))
  })

  test('an option of one value given twice is one UsageError line naming both; a repeatable one collects', async () => {
    const options = (y) => y.options({
      direction: { alias: 'd', type: 'string' },
      header: { type: 'array', string: true },
      quiet: { type: 'boolean' }
    })
    await assert.rejects(parse(['--direction', 'fanout', '--direction', 'up'], options),
      usage('--direction given more than once (fanout, up); give it once'))
    await assert.rejects(parse(['-d', 'up', '--direction', 'down'], options), /--d(irection)? given more than once \(up, down\)/)
    const args = await parse(['--header', 'a: 1', '--header', 'b: 2', '--direction', 'up'], options)
    assert.deepEqual(args.header, ['a: 1', 'b: 2'])
    assert.equal(args.direction, 'up')
  })

  test('has no --version option', async () => {
    await assert.rejects(parse(['--version']), usage('Unknown argument: version (see --help)'))
  })
})

describe('wholeNumber', () => {
  test('accepts whole numbers at or above the minimum, from strings or numbers', () => {
    assert.equal(wholeNumber('messages', '100', 1), 100)
    assert.equal(wholeNumber('messages', 1, 1), 1)
    assert.equal(wholeNumber('warmup', '0', 0), 0)
  })
  test('refuses fractions, words, values below the minimum and unsafe integers, naming the option', () => {
    assert.throws(() => wholeNumber('messages', '1.5', 1), usage("--messages must be a whole number >= 1, got '1.5'"))
    assert.throws(() => wholeNumber('messages', 'ten', 1), usage("--messages must be a whole number >= 1, got 'ten'"))
    assert.throws(() => wholeNumber('connections', 0, 1), usage("--connections must be a whole number >= 1, got '0'"))
    assert.throws(() => wholeNumber('warmup', '-1', 0), usage("--warmup must be a whole number >= 0, got '-1'"))
    assert.throws(() => wholeNumber('n', '9007199254740993', 0), UsageError)
  })
})

describe('duration', () => {
  test('reads ms, s, m and h; a bare number is seconds', () => {
    assert.equal(duration('duration', '500ms'), 500)
    assert.equal(duration('duration', '30s'), 30_000)
    assert.equal(duration('duration', '1.5s'), 1500)
    assert.equal(duration('duration', '2m'), 120_000)
    assert.equal(duration('duration', '1h'), 3_600_000)
    assert.equal(duration('duration', '3'), 3000)
    assert.equal(duration('duration', 4), 4000)
    assert.equal(duration('duration', ' 2m '), 120_000, 'surrounding spaces are ignored')
  })
  test('refuses zero, negative, unknown units and words, naming the option', () => {
    for (const text of ['0', '0s', '-5s', '5 minutes', '5d', 'soon', '']) {
      assert.throws(() => duration('duration', text), usage(`--duration must be a duration such as 30s, 500ms or 2m, got '${text}'`))
    }
    assert.throws(() => duration('warmup', 'x'), usage("--warmup must be a duration such as 30s, 500ms or 2m, got 'x'"))
  })
  // Under half a millisecond rounds to 0, which the load engine would read as "no deadline".
  test('never returns 0 for a duration under half a millisecond', () => {
    assert.throws(() => duration('duration', '0.4ms'), usage("--duration must be a duration such as 30s, 500ms or 2m, got '0.4ms'"))
    assert.equal(duration('duration', '0.5ms'), 1)
  })
})

describe('positiveNumber', () => {
  test('accepts any finite number above zero', () => {
    assert.equal(positiveNumber('rate', '2500'), 2500)
    assert.equal(positiveNumber('rate', 0.5), 0.5)
  })
  test('refuses zero, negatives, infinity and words', () => {
    for (const value of ['0', '-1', 'Infinity', 'fast']) {
      assert.throws(() => positiveNumber('rate', value), usage(`--rate must be a number > 0, got '${value}'`))
    }
  })
})

describe('commaList', () => {
  test('splits, trims and drops empty items', () => {
    assert.deepEqual(commaList('json, protobuf,,msgpack ,'), ['json', 'protobuf', 'msgpack'])
    assert.deepEqual(commaList('json'), ['json'])
    assert.deepEqual(commaList(''), [])
    assert.deepEqual(commaList(' , '), [])
  })
})

describe('parseWsUrl', () => {
  test('accepts ws:// and wss:// and drops the trailing slash', () => {
    assert.equal(parseWsUrl('ws://127.0.0.1:7070'), 'ws://127.0.0.1:7070')
    assert.equal(parseWsUrl('ws://127.0.0.1:7070/'), 'ws://127.0.0.1:7070')
    assert.equal(parseWsUrl('wss://bench.example.com/ws'), 'wss://bench.example.com/ws')
    assert.equal(parseWsUrl('WS://Host:80/'), 'ws://host', 'normalised by URL: scheme and host lower case, default port dropped')
  })
  test('keeps a path and query', () => {
    assert.equal(parseWsUrl('ws://h:1/a/?q=1'), 'ws://h:1/a/?q=1')
  })
  test('refuses what is not a URL, and other schemes', () => {
    assert.throws(() => parseWsUrl('127.0.0.1:7070:x'), usage("--url '127.0.0.1:7070:x' is not a URL (expected ws://host:port)"))
    assert.throws(() => parseWsUrl('http://127.0.0.1:7070'), usage("--url must start with ws:// or wss://, got 'http://127.0.0.1:7070'"))
  })
})

describe('hostAndPort', () => {
  test('reads host:port, or a port alone with the default host', () => {
    assert.deepEqual(hostAndPort('example.com:7070', '127.0.0.1'), ['example.com', 7070])
    assert.deepEqual(hostAndPort('7071', '127.0.0.1'), ['127.0.0.1', 7071])
    assert.deepEqual(hostAndPort('0', '0.0.0.0'), ['0.0.0.0', 0])
  })
  test('splits at the last colon, so a bare IPv6 address keeps its colons', () => {
    assert.deepEqual(hostAndPort('::1:7070', 'x'), ['::1', 7070])
    assert.deepEqual(hostAndPort('[::1]:7070', 'x'), ['::1', 7070], 'URL-style brackets dropped')
  })
  test('refuses a port above 65535', () => {
    assert.throws(() => hostAndPort('70000', 'x'), usage('a port is at most 65535, got 70000'))
  })
  test('refuses anything without a numeric port', () => {
    assert.throws(() => hostAndPort('example.com', '127.0.0.1'), usage("expected [host:]port, got 'example.com'"))
    assert.throws(() => hostAndPort('example.com:http', '127.0.0.1'), usage("expected [host:]port, got 'example.com:http'"))
    assert.throws(() => hostAndPort('', '127.0.0.1'), usage("expected [host:]port, got ''"))
  })
})

describe('payloadFiles', () => {
  test('null for a built-in test; the files as given with --payload', () => {
    assert.equal(payloadFiles({}), null)
    assert.deepEqual(payloadFiles({ payload: 'my.json' }), { payload: 'my.json', proto: undefined, type: undefined })
    assert.deepEqual(payloadFiles({ payload: 'my.json', proto: 'my.proto', type: 'shop.Order' }),
      { payload: 'my.json', proto: 'my.proto', type: 'shop.Order' })
  })
  test('refuses --proto or --type without --payload', () => {
    assert.throws(() => payloadFiles({ proto: 'my.proto' }), usage('--proto and --type go with --payload <file.json>'))
    assert.throws(() => payloadFiles({ type: 'shop.Order' }), usage('--proto and --type go with --payload <file.json>'))
  })
  test('PAYLOAD_OPTIONS declares the four options, --allow-lossy off by default', () => {
    assert.deepEqual(Object.keys(PAYLOAD_OPTIONS).sort(), ['allow-lossy', 'payload', 'proto', 'type'])
    assert.equal(PAYLOAD_OPTIONS['allow-lossy'].default, false)
  })
})
