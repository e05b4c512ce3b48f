import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { UsageError } from '../../lib/errors.js'
import { throwawayCertificate } from '../../lib/server/tls.js'
import { PROFILES } from '../../lib/network/profiles.js'
import { parseClientArgs } from '../../lib/cli/client-options.js'

// Never pass --help here: yargs answers it with process.exit.
const json = (...args) => parseClientArgs(['node', 'client_json.js', ...args], 'json')
const general = (...args) => parseClientArgs(['node', 'client.js', ...args], null)

const usage = (message) => (err) => {
  assert.ok(err instanceof UsageError, `expected a UsageError, got ${err?.name}: ${err?.message}`)
  assert.equal(err.message, message)
  assert.ok(!err.message.includes('\n'), 'one line')
  return true
}

// --token defaults to BENCH_TOKEN, read on each parse: keep the caller's environment out of these tests.
let savedToken
before(() => { savedToken = process.env.BENCH_TOKEN; delete process.env.BENCH_TOKEN })
after(() => { if (savedToken !== undefined) process.env.BENCH_TOKEN = savedToken })

describe('parseClientArgs: defaults', () => {
  test('a test alone: 10,000 messages, one at a time, to the default URL, no shaping, nothing streamed', async () => {
    const parsed = await json('3')
    // The run id, where --tag and --start-at give none: random.
    assert.match(parsed.outputs.tags.testid, /^[0-9a-f]{8}$/)
    assert.deepEqual(parsed, {
      format: 'json',
      codecModules: [],
      test: '3',
      custom: null,
      load: {
        messages: 10000,
        durationMs: undefined,
        rate: undefined,
        stages: undefined,
        pacing: 'precise',
        pacingReason: null,
        warmup: { messages: 0 },
        startAt: undefined,
        headers: {},
        subprotocol: undefined,
        insecure: false,
        ca: undefined,
        ack: { text: 'ACK' },
        reconnect: false,
        backoff: { baseMs: 100, capMs: 5000 },
        url: 'ws://127.0.0.1:7070',
        connections: 1,
        inflight: 1,
        timeoutMs: 10000,
        compress: false,
        repeat: false,
        direction: 'up'
      },
      allowLossy: false,
      workers: 1,
      out: undefined,
      outputs: { file: undefined, streams: [], intervalMs: 5000, native: false, tags: { testid: parsed.outputs.tags.testid } },
      hdrOut: undefined,
      html: undefined,
      assert: [],
      json: false,
      network: null,
      throttleBackend: 'auto'
    })
  })

  test('the test is kept as given, by number or name; messages and --inflight are read', async () => {
    const options = await json('small', '100', '--inflight', '8')
    assert.equal(options.test, 'small')
    assert.equal(options.load.messages, 100)
    assert.equal(options.load.inflight, 8)
  })

  test('with --rate, 1000 in flight unless --inflight says otherwise', async () => {
    const open = await json('5', '--rate', '2500')
    assert.equal(open.load.rate, 2500)
    assert.equal(open.load.inflight, 1000)
    assert.equal((await json('5', '--rate', '2500', '-i', '16')).load.inflight, 16)
  })

  test('short aliases: -c, -i, -r, -d, -w, -H', async () => {
    const options = await json('5', '-c', '4', '-i', '2', '-r', '100', '-d', '2s', '-w', '10', '-H', 'X-Run: 7')
    assert.equal(options.load.connections, 4)
    assert.equal(options.load.inflight, 2)
    assert.equal(options.load.rate, 100)
    assert.equal(options.load.durationMs, 2000)
    assert.deepEqual(options.load.warmup, { messages: 10 })
    assert.deepEqual(options.load.headers, { 'X-Run': '7' })
  })

  test('--url is checked and loses its trailing slash', async () => {
    assert.equal((await json('5', '--url', 'wss://bench.example.com:8443/')).load.url, 'wss://bench.example.com:8443')
    await assert.rejects(json('5', '--url', 'http://127.0.0.1:7070'), usage("--url must start with ws:// or wss://, got 'http://127.0.0.1:7070'"))
  })
})

describe('parseClientArgs: how long a run lasts', () => {
  test('--duration replaces the default message count; a count given too limits it', async () => {
    const timed = await json('5', '--duration', '30s')
    assert.equal(timed.load.durationMs, 30_000)
    assert.equal(timed.load.messages, undefined)
    const both = await json('5', '500', '--duration', '2m')
    assert.equal(both.load.messages, 500)
    assert.equal(both.load.durationMs, 120_000)
  })

  test('--warmup is a count, or a time when it ends in a unit', async () => {
    assert.deepEqual((await json('5', '--warmup', '200')).load.warmup, { messages: 200 })
    assert.deepEqual((await json('5', '--warmup', '2s')).load.warmup, { durationMs: 2000 })
    assert.deepEqual((await json('5', '--warmup', '250ms')).load.warmup, { durationMs: 250 })
  })

  test('bad counts and durations name the option', async () => {
    await assert.rejects(json('5', '0'), usage("--messages must be a whole number >= 1, got '0'"))
    await assert.rejects(json('5', 'many'), usage("--messages must be a whole number >= 1, got 'many'"))
    await assert.rejects(json('5', '--duration', 'forever'), usage("--duration must be a duration such as 30s, 500ms or 2m, got 'forever'"))
    await assert.rejects(json('5', '--warmup', '1.5'), usage("--warmup must be a whole number >= 0, got '1.5'"))
    await assert.rejects(json('5', '--warmup', '2d'), usage("--warmup must be a duration such as 30s, 500ms or 2m, got '2d'"))
    await assert.rejects(json('5', '--rate', '0'), usage("--rate must be a number > 0, got '0'"))
    await assert.rejects(json('5', '--connections', '0'), usage("--connections must be a whole number >= 1, got '0'"))
    await assert.rejects(json('5', '--inflight', '0'), usage("--inflight must be a whole number >= 1, got '0'"))
    await assert.rejects(json('5', '--workers', '0'), usage("--workers must be a whole number >= 1, got '0'"))
    await assert.rejects(json('5', '--timeout', '2.5'), usage("--timeout must be a whole number >= 1, got '2.5'"))
  })
})

describe('parseClientArgs: --payload', () => {
  test('the first positional is then the message count, and no test runs', async () => {
    const options = await json('--payload', 'order.json', '50')
    assert.equal(options.test, null)
    assert.equal(options.load.messages, 50)
    assert.deepEqual(options.custom, { payload: 'order.json', proto: undefined, type: undefined })
  })

  test('carries --proto, --type and --allow-lossy', async () => {
    const options = await json('--payload', 'order.json', '--proto', 'shop.proto', '--type', 'shop.Order', '--allow-lossy')
    assert.deepEqual(options.custom, { payload: 'order.json', proto: 'shop.proto', type: 'shop.Order' })
    assert.equal(options.allowLossy, true)
    assert.equal(options.load.messages, 10000)
  })

  test('refuses a test as well as a payload, --proto or --type without it, and --direction down', async () => {
    await assert.rejects(json('--payload', 'order.json', '3', '100'), usage("give either a test ('3') or --payload, not both"))
    await assert.rejects(json('3', '--proto', 'shop.proto'), usage('--proto and --type go with --payload <file.json>'))
    await assert.rejects(json('3', '--type', 'shop.Order'), usage('--proto and --type go with --payload <file.json>'))
    await assert.rejects(json('--payload', 'order.json', '--direction', 'down'),
      usage('--direction down needs a built-in test: the server cannot know your payload'))
    assert.equal((await json('--payload', 'order.json', '--direction', 'echo')).load.direction, 'echo')
  })

  test('with neither a test nor --payload, says what to give', async () => {
    await assert.rejects(json(), usage('name a test (1-5, people, person, counters) or give --payload <file.json> (see --help)'))
  })
})

describe('parseClientArgs: upgrade headers and replies', () => {
  test('--header lines and --token become upgrade headers', async () => {
    const options = await json('5', '--header', 'X-Tenant: blue', '-H', 'X-Empty:', '--token', 's3cret')
    assert.deepEqual(options.load.headers, { 'X-Tenant': 'blue', 'X-Empty': '', Authorization: 'Bearer s3cret' })
  })

  test('--token defaults to BENCH_TOKEN, read when the command line is parsed', async () => {
    process.env.BENCH_TOKEN = 'from-env'
    try {
      assert.deepEqual((await json('5')).load.headers, { Authorization: 'Bearer from-env' })
      assert.deepEqual((await json('5', '--token', 'given')).load.headers, { Authorization: 'Bearer given' })
    } finally {
      delete process.env.BENCH_TOKEN
    }
  })

  test('refuses a header that is not "Name: value"', async () => {
    await assert.rejects(json('5', '--header', 'no colon'), usage('--header must look like "Name: value", got \'no colon\''))
    await assert.rejects(json('5', '--header', 'Bad Name: x'), usage('--header must look like "Name: value", got \'Bad Name: x\''))
  })

  test('--ack: ACK by default, any, or text:<reply>', async () => {
    assert.deepEqual((await json('5', '--ack', 'ACK')).load.ack, { text: 'ACK' })
    assert.deepEqual((await json('5', '--ack', 'any')).load.ack, { any: true })
    assert.deepEqual((await json('5', '--ack', 'text:OK 200')).load.ack, { text: 'OK 200' })
    for (const text of ['ack', 'text:', 'OK']) {
      await assert.rejects(json('5', '--ack', text), usage(`--ack must be ACK, any or text:<reply>, got '${text}'`))
    }
  })

  test('--stages: DURATION:RATE steps from --rate (or 0), an open loop that sets its own duration; malformed, empty, silent or beside a count or --duration, one line', async () => {
    const ramp = await json('3', '--stages', '10s:1000, 30s:1000,500ms:0')
    assert.deepEqual(ramp.load.stages, [{ durationMs: 10_000, target: 1000 }, { durationMs: 30_000, target: 1000 }, { durationMs: 500, target: 0 }])
    assert.deepEqual([ramp.load.messages, ramp.load.durationMs, ramp.load.rate, ramp.load.inflight], [undefined, undefined, undefined, 1000])
    assert.equal((await json('3', '--stages', '5s:0', '--rate', '200')).load.rate, 200, 'a ramp down from --rate')
    const steps = (got) => usage(`--stages takes DURATION:RATE steps, the duration with its unit (ms, s, m) and the rate 0 or more, e.g. 10s:1000,30s:1000,10s:0; got '${got}'`)
    await assert.rejects(json('3', '--stages', '10:1000'), steps('10:1000'))
    await assert.rejects(json('3', '--stages', '10s:-5'), steps('10s:-5'))
    await assert.rejects(json('3', '--stages', ''), steps(''))
    await assert.rejects(json('3', '--stages', '10s:100,'), steps(''))
    await assert.rejects(json('3', '--stages', '5s:0,5s:0'), usage('--stages \'5s:0,5s:0\' calls for no message: give a stage a rate above 0 (e.g. 10s:1000,30s:1000,10s:0)'))
    await assert.rejects(json('3', '100', '--stages', '1s:10'), usage('--stages sends what its ramp calls for: drop the message count (100)'))
    await assert.rejects(json('3', '--duration', '5s', '--stages', '1s:10'), usage('--stages sets the duration (the sum of its stages): drop --duration'))
  })

  test('--arrivals R --per-connection K: new connections a second for a time (or on a ramp), one in flight by default; its own shape, so no --connections, --rate or count', async () => {
    const plain = await json('3', '--arrivals', '500', '--per-connection', '5', '--duration', '10s')
    assert.deepEqual([plain.load.arrivals, plain.load.perConnection, plain.load.durationMs, plain.load.inflight, plain.load.messages], [500, 5, 10_000, 1, undefined])
    const ramp = await json('3', '--arrivals', '10', '--per-connection', '1', '--stages', '5s:100')
    assert.deepEqual([ramp.load.arrivals, ramp.load.stages], [10, [{ durationMs: 5000, target: 100 }]])
    await assert.rejects(json('3', '--arrivals', '500', '--duration', '1s'), usage('--arrivals needs --per-connection K: the messages each new connection sends before it closes'))
    await assert.rejects(json('3', '--arrivals', '500', '--per-connection', '0', '--duration', '1s'), usage('--per-connection must be a whole number >= 1, got \'0\''))
    await assert.rejects(json('3', '--arrivals', '500', '--per-connection', '5'), usage('--arrivals runs for a time: give --duration (or --stages, for arrivals that ramp)'))
    await assert.rejects(json('3', '--arrivals', '500', '--per-connection', '5', '--duration', '1s', '--connections', '4'),
      usage('--arrivals opens its own connections at its rate, each sending --per-connection messages: drop --connections'))
    await assert.rejects(json('3', '--arrivals', '-1', '--per-connection', '5', '--duration', '1s'), UsageError)
    // With --rate each connection runs its own open loop, all of its K free to be outstanding.
    const paced = await json('3', '--arrivals', '50', '--per-connection', '4', '--rate', '20', '--duration', '1s')
    assert.deepEqual([paced.load.rate, paced.load.inflight], [20, 4])
  })

  test('--ca: its PEM read once here, for a wss:// server; unreadable, not PEM, or with ws:// is one line', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'client-options-'))
    try {
      const pem = (await throwawayCertificate()).cert
      const file = path.join(dir, 'ca.pem')
      fs.writeFileSync(file, pem)
      assert.equal((await json('5', '--url', 'wss://bench.example:7443', '--ca', file)).load.ca, pem)
      assert.equal((await json('5')).load.ca, undefined)
      await assert.rejects(json('5', '--ca', file), usage('--ca is for wss:// servers; --url is ws://127.0.0.1:7070'))
      await assert.rejects(json('5', '--url', 'wss://h:1', '--ca', path.join(dir, 'none.pem')), usage(`--ca ${path.join(dir, 'none.pem')}: cannot read it (ENOENT)`))
      fs.writeFileSync(path.join(dir, 'key.pem'), 'text')
      await assert.rejects(json('5', '--url', 'wss://h:1', '--ca', path.join(dir, 'key.pem')), usage(`--ca ${path.join(dir, 'key.pem')}: not a PEM certificate`))
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  test('--reconnect-base and --reconnect-cap: the backoff, as durations; anything else one line', async () => {
    assert.deepEqual((await json('5', '--reconnect', '--reconnect-base', '250ms', '--reconnect-cap', '2s')).load.backoff, { baseMs: 250, capMs: 2000 })
    await assert.rejects(json('5', '--reconnect-cap', 'soon'), usage('--reconnect-cap must be a duration such as 30s, 500ms or 2m, got \'soon\''))
  })

  test('--subprotocol, --insecure, --reconnect, --compress, --json and the output files are passed on', async () => {
    const options = await json('5', '--subprotocol', 'bench.v1', '--insecure', '--reconnect', '--compress', '--json',
      '--out', 'r.json', '--hdr-out', 'r.hlog', '--assert', 'p99<20ms', '--assert', 'errors==0', '--direction', 'down')
    assert.equal(options.load.subprotocol, 'bench.v1')
    assert.equal(options.load.insecure, true)
    assert.equal(options.load.reconnect, true)
    assert.equal(options.load.compress, true)
    assert.equal(options.json, true)
    assert.equal(options.out, 'r.json')
    assert.equal(options.hdrOut, 'r.hlog')
    assert.deepEqual(options.assert, ['p99<20ms', 'errors==0'])
    assert.equal(options.load.direction, 'down')
  })
})

describe('parseClientArgs: network', () => {
  test('--throttle names a profile', async () => {
    assert.deepEqual((await json('4', '--throttle', '3g')).network, { profile: '3g', ...PROFILES['3g'], loss: 0 })
    assert.equal((await json('4', '--throttle', 'none')).network, null)
  })

  test('--up, --down and --rtt override the profile and make it custom', async () => {
    assert.deepEqual((await json('4', '--throttle', '3g', '--rtt', '40')).network,
      { profile: 'custom', up: 768, down: 1600, rtt: 40, loss: 0 })
    const alone = await json('5', '--rtt', '100', '--up', '400', '--down', '400', '--throttle-backend', 'proxy')
    assert.deepEqual(alone.network, { profile: 'custom', up: 400, down: 400, rtt: 100, loss: 0 })
    assert.equal(alone.throttleBackend, 'proxy')
  })

  test('an unknown profile, a bad value or backend is refused', async () => {
    await assert.rejects(json('4', '--throttle', 'moon'),
      usage(`unknown --throttle 'moon': expected none or one of ${Object.keys(PROFILES).join(', ')}`))
    await assert.rejects(json('4', '--up', '-1'), usage("--up must be a positive number of kbit/s, got '-1'"))
    await assert.rejects(json('4', '--throttle-backend', 'magic'),
      usage('Invalid values: Argument: throttle-backend, Given: "magic", Choices: "auto", "tc", "proxy" (see --help)'))
  })
})

describe('parseClientArgs: client.js', () => {
  test('takes the format from --format (or -f)', async () => {
    assert.equal((await general('3', '--format', 'msgpack')).format, 'msgpack')
    assert.equal((await general('3', '-f', 'avro')).format, 'avro')
  })

  test('requires --format and knows the formats', async () => {
    await assert.rejects(general('3'), usage('Missing required argument: format (see --help)'))
    await assert.rejects(general('3', '--format', 'xml'), usage('unknown format \'xml\': expected one of avro, cbor, fast-json, google-protobuf, json, ' +
      'json-validated, msgpack, protobuf, protobuf-es, or add it with --codec-module <file.js>'))
  })

  test('client_json.js has no --format option', async () => {
    await assert.rejects(json('3', '--format', 'protobuf'), usage('Unknown argument: format (see --help)'))
  })
})

describe('parseClientArgs: command-line mistakes', () => {
  test('unknown options, extra positionals and bad choices are one UsageError line', async () => {
    await assert.rejects(json('3', '--bogus'), usage('Unknown argument: bogus (see --help)'))
    await assert.rejects(json('3', '5', '6'), usage('Unknown argument: 6 (see --help)'))
    await assert.rejects(json('3', '--direction', 'sideways'),
      usage('Invalid values: Argument: direction, Given: "sideways", Choices: "up", "down", "echo", "fanout" (see --help)'))
  })
})

test('a number option given text is quoted as typed, not as NaN', async () => {
  await assert.rejects(json('5', '--rate', 'abc'), usage("--rate must be a number > 0, got 'abc'"))
  await assert.rejects(json('5', '--up', 'abc'), usage("--up must be a positive number of kbit/s, got 'abc'"))
  assert.equal((await json('5', '--rate', '2500')).load.rate, 2500)
})

test('--start-at: an ISO time or epoch ms to come; malformed or past is one line', async () => {
  const at = new Date(Date.now() + 60_000)
  assert.equal((await json('5', '--start-at', at.toISOString())).load.startAt, at.getTime())
  assert.equal((await json('5', '--start-at', String(at.getTime()))).load.startAt, at.getTime())
  await assert.rejects(json('5', '--start-at', 'soon'), usage("--start-at must be an ISO time such as 2026-11-23T17:00:00Z, or epoch milliseconds, got 'soon'"))
  await assert.rejects(json('5', '--start-at', '2020-01-01T00:00:00Z'), (err) => err instanceof UsageError && /^--start-at 2020-01-01T00:00:00\.000Z is in the past \(now \d{4}-/.test(err.message))
})

describe('parseClientArgs: --direction fanout', () => {
  test('subscribers, a rate, a role, a heartbeat and which subscribers decode', async () => {
    const options = await json('3', '--direction', 'fanout', '--connections', '1000', '--rate', '20', '--duration', '10s')
    assert.equal(options.load.direction, 'fanout')
    assert.equal(options.load.connections, 1000)
    assert.equal(options.load.rate, 20)
    assert.equal(options.load.role, 'both')
    assert.equal(options.load.heartbeatMs, 500)
    const split = await json('3', '--direction', 'fanout', '--rate', '5', '--role', 'subscriber', '--heartbeat', '2s')
    assert.deepEqual([split.load.role, split.load.heartbeatMs], ['subscriber', 2000])
    assert.equal(options.load.decode, 'all')
    assert.equal((await json('3', '--direction', 'fanout', '--rate', '5', '--decode', 'one')).load.decode, 'one')
  })

  test('without a rate, with --inflight, --workers, or more subscribers than the open-file limit: one line each', async () => {
    const fanout = (...args) => json('3', '--direction', 'fanout', ...args)
    await assert.rejects(fanout(), usage('--direction fanout needs --rate (publishes per second) or --stages'))
    await assert.rejects(fanout('--rate', '0'), usage("--rate must be a number > 0, got '0'"))
    await assert.rejects(fanout('--rate', '5', '--inflight', '10'), usage('--inflight does not apply to fanout: the publisher follows --rate, subscribers only listen'))
    await assert.rejects(fanout('--rate', '5', '--workers', '2', '--connections', '4'), /--workers does not apply to fanout/)
    await assert.rejects(fanout('--rate', '5', '--connections', '10000000'),
      /^UsageError: --connections 10000000: this process may open at most \d+ connections \(open-file limit \d+\); raise it \(ulimit -n, as root\) or split the subscribers over processes with --role subscriber$/)
    await assert.rejects(json('3', '--role', 'publisher'), usage('--role goes with --direction fanout, not up'))
    await assert.rejects(json('3', '--decode', 'one', '--direction', 'echo'), usage('--decode goes with --direction fanout, not echo'))
  })
})
