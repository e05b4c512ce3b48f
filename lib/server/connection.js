// One admitted WebSocket connection on the server: counted while open, a user's payload's schema
// registered first when its format needs one, then every message answered in order.
import { loadMessages } from '../payloads/catalog.js'
import { compileRegistration } from '../schema/registration.js'
import { ACK, CLOSE_CODES, ERROR_PREFIX, FANOUT_HEADER_BYTES, REGISTRATION_OK, isFanoutEnd, readFanoutHeader } from '../protocol.js'
import { UsageError, oneLine } from '../errors.js'

const ACK_FRAME = Buffer.from(ACK)
const TEXT_FRAME = { binary: false }

/**
 * @typedef {object} ConnectionContext what every connection of one server shares
 * @property {import('./stats.js').ServerStats} stats
 * @property {number} maxSchemaBytes largest .proto a client may register; 0 refuses registrations
 * @property {Map<string, object>} schemaCache compiled registrations, by their text
 * @property {() => void} afterMessage called after each answer (the --stall hook, or nothing)
 * @property {import('./fanout.js').Topics} topics fan-out's subscribers, by topic
 */

/**
 * Serves an admitted connection until it closes.
 * @param {import('ws').WebSocket} ws
 * @param {import('node:net').Socket} socket the connection's, upgraded (a fan-out subscriber's publishes go straight to it)
 * @param {{target: import('./admission.js').ConnectionTarget, codecOf: Function, codec: object|null}} admitted
 *   codec null: the first message registers the schema the codec is made for
 * @param {ConnectionContext} context
 */
export function serveConnection (ws, socket, { target, codecOf, codec }, context) {
  const { stats } = context
  stats.opened()
  // ws reports protocol violations (invalid UTF-8, oversized frames) here and then closes the
  // connection with the matching code (CLOSE_CODES); count them, never let them escape.
  ws.on('error', () => stats.count('protocolErrors'))
  ws.on('close', () => stats.closed())
  if (target.role === 'subscriber') subscribe(ws, socket, target, context)
  else if (codec) answerMessages(ws, target, codec, context)
  else awaitRegistration(ws, target, codecOf, context)
}

/**
 * A user's payload in a format that decodes by its schema (protobuf, for one): its first message
 * must register the schema. One that cannot be compiled (too big, invalid, unknown type), or that
 * the format cannot make a codec of, is answered `ERR schema ...` and the connection is closed
 * with 1008; nothing from it is compiled without the size limit.
 */
function awaitRegistration (ws, target, codecOf, context) {
  ws.once('message', (data) => {
    let test, codec
    try {
      if (context.maxSchemaBytes === 0) throw new UsageError('this server does not accept schema registrations (--max-schema-bytes 0)')
      const type = compileRegistration(data, context.maxSchemaBytes, context.schemaCache)
      test = { ...target.test, type, typeName: type.fullName.slice(1) }
      codec = codecOf(test)
    } catch (err) {
      context.stats.count('refusedSchemas')
      ws.send(`${ERROR_PREFIX}schema refused: ${oneLine(err)}`)
      ws.close(CLOSE_CODES.schemaRefused, 'schema refused')
      return
    }
    ws.send(REGISTRATION_OK)
    answerMessages(ws, { ...target, test }, codec, context)
  })
}

/**
 * A fan-out subscriber: it receives its topic's publishes and sends nothing (pings aside, which ws
 * answers); a message from it gets an ERR line, as a misdirected client should.
 */
function subscribe (ws, socket, { test, format, from }, { topics }) {
  topics.subscribe(`${format} ${test.name}`, ws, socket, from)
  ws.on('message', () => ws.send(`${ERROR_PREFIX}a fan-out subscriber sends nothing; publish with &role=publisher`))
}

/**
 * A fan-out publisher: each publish (header and payload) is checked and decoded once, handed to
 * every subscriber of its topic as it came, then acknowledged; its END goes to them too, unanswered.
 */
function answerPublishes (ws, { test, format }, codec, { stats, topics, afterMessage }) {
  const key = `${format} ${test.name}`
  const counters = stats.forTarget(format, test.name)
  const header = { measured: false, replayed: false, seq: 0, publishedAtUs: 0 }
  ws.on('message', (data, isBinary) => {
    if (!isBinary && isFanoutEnd(data)) return topics.publish(key, data, false)
    try {
      // Replayed is the server's mark, never a publisher's.
      if (!readFanoutHeader(data, header) || header.replayed) throw new Error(`a publish starts with the ${FANOUT_HEADER_BYTES}-byte fan-out header`)
      const started = performance.now()
      codec.decode(data.subarray(FANOUT_HEADER_BYTES))
      counters.codecMs += performance.now() - started
    } catch (err) {
      counters.errors++
      ws.send(`${ERROR_PREFIX}${format} decode failed for test ${test.name}: ${oneLine(err)}`)
      return
    }
    counters.messages++
    topics.publish(key, data, isBinary)
    ws.send(ACK_FRAME, TEXT_FRAME)
    afterMessage()
  })
}

/** Answers every message of one connection, in order: ACK (up), the payload (down) or the message re-encoded (echo). */
function answerMessages (ws, target, codec, context) {
  if (target.direction === 'fanout') return answerPublishes(ws, target, codec, context)
  const { test, format, direction, repeat } = target
  const { stats, afterMessage } = context
  const counters = stats.forTarget(format, test.name)
  const payloadFrame = { binary: codec.binary }
  // Each connection sends the test's messages in turn from the first, as a client does.
  let natives = null
  try {
    if (direction === 'down') natives = preparedMessages(codec, test, repeat)
  } catch (err) {
    counters.errors++
    ws.send(`${ERROR_PREFIX}${format} prepare failed for test ${test.name}: ${oneLine(err)}`)
    ws.close(CLOSE_CODES.cannotPrepare, 'cannot prepare the test')
    return
  }
  let next = 0
  ws.on('message', (data) => {
    let reply
    // The codec's own time, apart from framing and syscalls: what a format changes (compare's codec rows).
    const started = performance.now()
    try {
      if (direction === 'down') {
        reply = codec.encode(natives[next])
        next = next + 1 === natives.length ? 0 : next + 1
      } else if (direction === 'echo') reply = codec.encode(codec.decode(data))
      else codec.decode(data)
      counters.codecMs += performance.now() - started
    } catch (err) {
      counters.errors++
      ws.send(`${ERROR_PREFIX}${format} ${direction === 'down' ? 'encode' : 'decode'} failed for test ${test.name}: ${oneLine(err)}`)
      return
    }
    counters.messages++
    if (reply === undefined) ws.send(ACK_FRAME, TEXT_FRAME)
    else ws.send(reply, payloadFrame)
    afterMessage()
  })
}

const preparedCache = new WeakMap()

/**
 * A built-in test's messages in the codec's own form, prepared once per codec, test and kind and
 * shared by every connection, as a client prepares its payloads; encoded for every reply, the cost measured.
 * @param {import('../codecs/registry.js').Codec} codec the registry's codec for this test: one per format and
 *   test, or one for every test (JSON's), hence the test in the key
 * @param {import('../payloads/catalog.js').TestInfo} test
 * @param {boolean} repeat the one message instead of the stream
 * @returns {unknown[]}
 */
function preparedMessages (codec, test, repeat) {
  if (!preparedCache.has(codec)) preparedCache.set(codec, new Map())
  const byTestAndKind = preparedCache.get(codec)
  const key = `${test.name} ${repeat}`
  if (!byTestAndKind.has(key)) {
    byTestAndKind.set(key, loadMessages(test, { repeat }).messages.map((message) => codec.prepare(message)))
  }
  return byTestAndKind.get(key)
}

/**
 * The --stall hook: blocks the whole process once, as a long GC pause would.
 * @param {{ms: number, after: number}} stall
 * @returns {() => void}
 */
export function stallOnce ({ ms, after }) {
  let remaining = after
  return () => {
    if (--remaining !== 0) return
    const until = Date.now() + ms
    while (Date.now() < until); // deliberately blocking: nothing else may run
  }
}
