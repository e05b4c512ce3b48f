// SIGTERM at the worst moments (docs/protocol.md, "Stopping"), against the Node, Go and Java
// servers: a connection its client saw open is closed with 1001, any other is refused (503, or cut
// before an answer), and the server exits with code 0. Made to find the race between a stop and
// an upgrade under way: each round holds a batch of upgrades on open TCP connections and writes
// their requests in one go with the signal among them, at another place each round, while one
// connection opened before is in its close handshake. And a signal sent as soon as the ready line
// is read, which must find the server listening for it. Servers run a few at once, as a JVM takes
// most of a second of CPU to start.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import WebSocket from 'ws'
import { buildReferenceServer } from '../../lib/reference/servers.js'
import { referenceServerUnavailable, startServerProcess } from '../helpers.js'

const ROUNDS = 50
/** Upgrades whose requests go out with the signal, each round. */
const UPGRADES = 20
const READY_STOPS = 8
const AT_ONCE = 4
/** Well past a stop's 1 s for peers to answer the close: a server still running then is stuck, and killed. */
const STOP_LIMIT_MS = 10_000

/** Each server's environment; node runs server.js, the others are built from servers/NAME. */
const SERVERS = {
  node: {},
  go: {},
  // The client compiler alone and the serial collector: a JVM starts on half the CPU time.
  java: { WSBENCH_JAVA_OPTS: '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC' }
}
/** How a connection may end when the server stops under it. */
const ACCEPTED = ['closed 1001', 'refused 503', 'cut before an answer']

for (const [name, env] of Object.entries(SERVERS)) {
  const unavailable = name !== 'node' && referenceServerUnavailable(name)
  let command // built on first use, when its sources changed
  const start = () => startServerProcess([], { command: name === 'node' ? undefined : (command ??= buildReferenceServer(name)), env })

  test(`${name} server, SIGTERM as upgrades complete, ${ROUNDS} times: every connection refused, or opened and closed with 1001; exit code 0`,
    { skip: unavailable, timeout: 300_000 }, async () => {
      const tally = {}
      const failures = []
      await inTurn(ROUNDS, async (round) => {
        const { code, outcomes } = await stopDuringUpgrades(start, round % (UPGRADES + 1))
        for (const outcome of outcomes) tally[outcome] = (tally[outcome] ?? 0) + 1
        const wrong = outcomes.filter((outcome) => !ACCEPTED.includes(outcome))
        if (code !== 0 || wrong.length) failures.push(`round ${round}: exit code ${code}, ${wrong.join(', ') || 'every connection as it should'}`)
      })
      process.stderr.write(`# ${name} shutdown: ${ROUNDS} stops, connections ${JSON.stringify(tally)}\n`)
      assert.deepEqual(failures, [], `${failures.length} of ${ROUNDS} stops`)
    })

  test(`${name} server, SIGTERM as soon as its ready line is read, ${READY_STOPS} times: exit code 0`, { skip: unavailable, timeout: 300_000 }, async () => {
    const codes = await inTurn(READY_STOPS, async () => (await start()).stop())
    assert.deepEqual(codes, Array(READY_STOPS).fill(0))
  })
}

/**
 * Runs rounds 0 to count - 1, AT_ONCE at a time.
 * @param {number} count
 * @param {(round: number) => Promise<*>} run
 * @returns {Promise<Array<*>>} what each round resolved with, in round order
 */
async function inTurn (count, run) {
  const results = []
  let next = 0
  await Promise.all(Array.from({ length: AT_ONCE }, async () => {
    while (next < count) {
      const round = next++
      results[round] = await run(round)
    }
  }))
  return results
}

/**
 * One round: a server, a connection open, then the upgrades' requests written with SIGTERM sent
 * after the first `signalAt` of them.
 * @returns {Promise<{code: number|string, outcomes: string[]}>} the exit code ('stuck' when it had
 *   to be killed) and how each connection ended
 */
async function stopDuringUpgrades (start, signalAt) {
  const server = await start()
  const url = `${server.url}/?test=small&format=protobuf`
  const established = heldUpgrade(url)
  ;(await established.connected)()
  await established.opened
  const upgrades = Array.from({ length: UPGRADES }, () => heldUpgrade(url))
  const sends = await Promise.all(upgrades.map(({ connected }) => connected))
  let exited
  sends.forEach((send, i) => {
    if (i === signalAt) exited = server.stop()
    send()
  })
  exited ??= server.stop()
  let stuck = false
  const limit = setTimeout(() => { stuck = true; server.child.kill('SIGKILL') }, STOP_LIMIT_MS)
  const code = await exited
  clearTimeout(limit)
  const outcomes = await Promise.all([established, ...upgrades].map(({ ended }) => ended))
  return { code: stuck ? 'stuck' : code, outcomes }
}

/**
 * An upgrade whose TCP connection opens at once and whose request waits to be sent.
 * @param {string} url
 * @returns {{connected: Promise<() => void>, opened: Promise<void>, ended: Promise<string>}}
 *   connected: once the TCP connection is up, with the function that writes the request (one
 *   write, there and then); ended: `closed <code>` if it opened, else `refused <status>` or
 *   `cut before an answer`
 */
function heldUpgrade (url) {
  let connect
  const connected = new Promise((resolve) => { connect = resolve })
  const ws = new WebSocket(url, {
    perMessageDeflate: false,
    // ws calls this instead of ending the request itself: ended on a connected socket, the
    // request goes out in one write, there and then.
    finishRequest: (request) => request.on('socket', (socket) => socket.once('connect', () => connect(() => request.end())))
  })
  let isOpen = false
  const opened = new Promise((resolve) => ws.once('open', () => { isOpen = true; resolve() }))
  const ended = new Promise((resolve) => {
    ws.once('unexpected-response', (request, response) => {
      request.destroy()
      resolve(`refused ${response.statusCode}`)
    })
    ws.on('error', () => {}) // the close that follows says what became of it
    ws.once('close', (code) => resolve(isOpen ? `closed ${code}` : 'cut before an answer'))
  })
  return { connected, opened, ended }
}
