import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { UsageError } from '../../lib/errors.js'
import { formatNames } from '../../lib/codecs/registry.js'
import { PROFILES } from '../../lib/network/profiles.js'
import { parseCompareArgs } from '../../lib/cli/compare-options.js'

// Never pass --help here: yargs answers it with process.exit.
const compare = (...args) => parseCompareArgs(['node', 'bin/compare.js', ...args])

const usage = (message) => (err) => {
  assert.ok(err instanceof UsageError, `expected a UsageError, got ${err?.name}: ${err?.message}`)
  assert.equal(err.message, message)
  return true
}

describe('parseCompareArgs', () => {
  test('defaults: every test, json then protobuf, no shaping, as many generations as fit the default budget, ±5%, pinned, batch sizes left to each test, no calibration', async () => {
    const options = await compare()
    assert.deepEqual(options, {
      formats: ['json', 'protobuf'],
      codecModules: [],
      calibrate: null,
      tests: ['numbers', 'strings', 'medium', 'large', 'small', 'people', 'person', 'counters'],
      custom: null,
      allowLossy: false,
      profiles: ['none'],
      compress: false,
      tls: false,
      repeat: false,
      direction: 'up',
      trials: undefined,
      budgetMs: undefined,
      margin: 0.05,
      pin: true,
      server: { kind: 'node', args: [] },
      warmup: undefined,
      messages: undefined,
      inflight: 1,
      rate: undefined,
      connections: 1,
      out: 'compare-report',
      // The run id, where --tag gives none: random.
      outputs: { file: undefined, streams: [], intervalMs: undefined, native: false, tags: { testid: options.outputs.tags.testid } },
      json: false
    })
  })

  test('--out: a directory (-o too), and metrics streams pushed at the end', async () => {
    assert.equal((await compare('-o', 'here')).out, 'here')
    const { out, outputs } = await compare('--out', 'there', '--out', 'otlp=http://c:4318/v1/metrics', '--tag', 'testid=c1')
    assert.equal(out, 'there')
    assert.deepEqual(outputs.streams.map(({ kind }) => kind), ['otlp'])
    assert.deepEqual(outputs.tags, { testid: 'c1' })
    await assert.rejects(compare('--out', 'a', '--out', 'b'), /one report file, not 2/)
  })

  test('--start-warmup: each client\'s warm-up per format at the start, a duration; without it, the server\'s own', async () => {
    assert.equal((await compare()).warmup, undefined)
    assert.deepEqual((await compare('--server', 'java', '--start-warmup', '1.5s')).warmup, { startMs: 1500 })
    await assert.rejects(compare('--start-warmup', 'soon'), { message: "--start-warmup must be a duration such as 30s, 500ms or 2m, got 'soon'" })
  })

  test('--server go or --server-command: which server the formats meet; what only the node server serves is refused', async () => {
    assert.deepEqual((await compare('--server', 'go')).server, { kind: 'go', args: [] })
    assert.deepEqual((await compare('--server-command', ' ./my-server  --threads 4 ')).server, { kind: 'command', command: ['./my-server', '--threads', '4'] })
    await assert.rejects(compare('--server', 'go', '--formats', 'json,cbor'), { message: '--server go serves json and protobuf, not cbor' })
    await assert.rejects(compare('--server', 'go', '--payload', 'data/person.json'), { message: '--server go serves the built-in tests only: --payload needs --server node' })
    await assert.rejects(compare('--server-command', './s', '--calibrate'), { message: '--calibrate plants its cost in a JavaScript codec the server loads: it runs on --server node' })
    await assert.rejects(compare('--server-command', ' '), { message: '--server-command needs a program to run' })
  })

  test('--server-args: options for the server\'s command line, after an equals sign; refused with a --server-command, empty or spaced apart', async () => {
    assert.deepEqual((await compare('--server', 'java', '--server-args= --json-library  gson ')).server, { kind: 'java', args: ['--json-library', 'gson'] })
    assert.deepEqual((await compare('--server-args=--max-payload 2000000')).server, { kind: 'node', args: ['--max-payload', '2000000'] })
    await assert.rejects(compare('--server-command', './s', '--server-args=--x'), usage('--server-args go with --server: put the options in --server-command itself'))
    await assert.rejects(compare('--server', 'java', '--server-args= '), usage('--server-args needs the server\'s options: --server-args=\'--json-library gson\''))
    await assert.rejects(compare('--server', 'java', '--server-args', '--json-library gson'),
      usage('--server-args takes the server\'s options after an equals sign, as one argument: --server-args=\'--json-library gson\''))
  })

  test('options as given: tests by number or name, -n (messages per batch), -i, -c, -t, -o', async () => {
    const options = await compare('--tests', '1, small', '-n', '50', '-i', '8', '-c', '2', '-t', '3', '-o', 'out', '--json', '--compress', '--direction', 'echo')
    assert.deepEqual(options.tests, ['1', 'small'])
    assert.equal(options.messages, 50)
    assert.equal((await compare('--messages', '1')).messages, 1, 'a batch of one message is allowed')
    assert.equal(options.inflight, 8)
    assert.equal(options.connections, 2)
    assert.equal(options.trials, 3)
    assert.equal(options.out, 'out')
    assert.equal(options.json, true)
    assert.equal(options.compress, true)
    assert.equal(options.direction, 'echo')
  })

  test('an unknown test is refused', async () => {
    await assert.rejects(compare('--tests', '1,9'),
      usage("unknown test '9': expected one of 1 numbers, 2 strings, 3 medium, 4 large, 5 small, people, person, counters"))
  })
})

describe('parseCompareArgs: --formats', () => {
  test('in the order given, the first the baseline; every registered format is accepted', async () => {
    assert.deepEqual((await compare('--formats', 'protobuf,json,msgpack')).formats, ['protobuf', 'json', 'msgpack'])
    assert.deepEqual((await compare('--formats', formatNames().join(','))).formats, formatNames())
  })

  test('one format named twice is an A/A run, kept twice', async () => {
    assert.deepEqual((await compare('--formats', 'json,json')).formats, ['json', 'json'])
  })

  test('an unknown or empty list is refused', async () => {
    await assert.rejects(compare('--formats', 'json,xml'),
      usage(`unknown format 'xml': expected one of ${formatNames().join(', ')}, or add it with --codec-module <file.js>`))
    await assert.rejects(compare('--formats', ' , '), usage(`--formats needs at least one of ${formatNames().join(', ')}`))
  })

  test('a custom payload takes only the formats that carry one', async () => {
    await assert.rejects(compare('--payload', 'order.json', '--formats', 'json,avro'),
      usage('format \'avro\' does not carry a payload of your own: it works from a built-in test\'s schema'))
    const carriers = ['json', 'protobuf', 'fast-json', 'msgpack', 'cbor']
    assert.deepEqual((await compare('--payload', 'order.json', '--formats', carriers.join(','))).formats, carriers)
  })
})

describe('parseCompareArgs: --payload', () => {
  test('replaces the tests', async () => {
    const options = await compare('--payload', 'order.json', '--proto', 'shop.proto', '--type', 'shop.Order', '--allow-lossy')
    assert.deepEqual(options.tests, [])
    assert.deepEqual(options.custom, { payload: 'order.json', proto: 'shop.proto', type: 'shop.Order' })
    assert.equal(options.allowLossy, true)
  })

  test('refuses --tests beside it, in either spelling', async () => {
    await assert.rejects(compare('--payload', 'order.json', '--tests', '1'), usage('give either --tests or --payload, not both'))
    await assert.rejects(compare('--tests=1,2', '--payload', 'order.json'), usage('give either --tests or --payload, not both'))
  })

  test('refuses --proto or --type without it, and --direction down with it', async () => {
    await assert.rejects(compare('--proto', 'shop.proto'), usage('--proto and --type go with --payload <file.json>'))
    await assert.rejects(compare('--payload', 'order.json', '--direction', 'down'),
      usage('--direction down needs built-in tests: the server cannot know your payload'))
  })
})

describe('parseCompareArgs: profiles and trials', () => {
  test('--throttle lists profiles, each checked before anything runs', async () => {
    assert.deepEqual((await compare('--throttle', 'none, 3g,lte')).profiles, ['none', '3g', 'lte'])
    await assert.rejects(compare('--throttle', 'none,moon'),
      usage(`unknown --throttle 'moon': expected none or one of ${Object.keys(PROFILES).join(', ')}`))
  })

  test('--trials: 2 to 50 generations (one generation has no spread to measure)', async () => {
    assert.equal((await compare('--trials', '2')).trials, 2)
    assert.equal((await compare('-t', '50')).trials, 50)
    await assert.rejects(compare('--trials', '1'), usage("--trials must be a whole number >= 2, got '1'"))
    await assert.rejects(compare('--trials', '0'), usage("--trials must be a whole number >= 2, got '0'"))
    await assert.rejects(compare('--trials', '2.5'), usage("--trials must be a whole number >= 2, got '2.5'"))
    await assert.rejects(compare('--trials', '51'), usage('--trials must be at most 50, got 51'))
  })

  test('--warmup is gone: strict parsing refuses it, in either spelling, with one line', async () => {
    await assert.rejects(compare('--warmup', '5'), usage('Unknown argument: warmup (see --help)'))
    await assert.rejects(compare('-w', '5'), usage('Unknown argument: w (see --help)'))
  })

  test('--budget is a duration, --equivalence a percentage; --trials and --budget do not go together', async () => {
    assert.equal((await compare('--budget', '5m')).budgetMs, 300_000)
    assert.equal((await compare('--equivalence', '2')).margin, 0.02)
    assert.equal((await compare('--equivalence', '2.5%')).margin, 0.025)
    assert.equal((await compare('--no-pin')).pin, false)
    assert.equal((await compare('--trials', '4')).budgetMs, undefined)
    await assert.rejects(compare('--budget', '-1s'), usage("--budget must be a duration such as 30s, 500ms or 2m, got '-1s'"))
    await assert.rejects(compare('--budget', '0s'), usage("--budget must be a duration such as 30s, 500ms or 2m, got '0s'"))
    await assert.rejects(compare('--equivalence', '0'), usage("--equivalence must be a percentage above 0 and below 100, got '0'"))
    await assert.rejects(compare('--equivalence', 'abc'), usage("--equivalence must be a percentage above 0 and below 100, got 'abc'"))
    await assert.rejects(compare('--equivalence', '100'), usage("--equivalence must be a percentage above 0 and below 100, got '100'"))
    await assert.rejects(compare('--trials', '4', '--budget', '30s'), usage('give either --trials (a fixed number of generations) or --budget (as many as fit), not both'))
  })

  test('bad counts name their option', async () => {
    await assert.rejects(compare('-n', '0'), usage("--messages must be a whole number >= 1, got '0'"))
    await assert.rejects(compare('-i', 'x'), usage("--inflight must be a whole number >= 1, got 'x'"))
    await assert.rejects(compare('-c', '1.5'), usage("--connections must be a whole number >= 1, got '1.5'"))
  })
})

describe('parseCompareArgs: --direction fanout', () => {
  test('a publish rate (20/s unless --rate says otherwise), subscribers from --connections', async () => {
    const options = await compare('--direction', 'fanout', '--connections', '200', '--tests', '3,4')
    assert.deepEqual([options.direction, options.rate, options.connections], ['fanout', 20, 200])
    assert.equal((await compare('--direction', 'fanout', '--rate', '50')).rate, 50)
  })

  test('--inflight with fanout, --rate without it, a rate of 0: one line each', async () => {
    await assert.rejects(compare('--direction', 'fanout', '--inflight', '4'), /^UsageError: --inflight does not apply to fanout/)
    await assert.rejects(compare('--rate', '5'), /^UsageError: --rate goes with --direction fanout/)
    await assert.rejects(compare('--direction', 'fanout', '--rate', '0'), /^UsageError: --rate must be a number > 0, got '0'$/)
  })
})
