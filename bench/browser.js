// npm run bench:browser -- [--tests people,person,medium,large] [--budget 240s] [--trials N] [--messages 100]
//   [--throttle cable,3g] [--link-messages 1] [--max-link-seconds 2] [--chromium PATH]
// The seed's own experiment in the browser: a server sends 50,000 persons (`people`) to Chromium,
// JSON against protobuf, with permessage-deflate off and on (the WebSocket counterpart of the seed's
// gzip). Debian's Chromium runs headless on the page server.js serves, with nothing downloaded; in
// the page, per message: the transfer (from the request to the message event, the whole message
// received), the decode with the page's own codec (JSON.parse; protobuf.js decode) and their sum,
// the seed's "time until the data reaches the browser's code"; from Chromium's side (the DevTools
// protocol) the renderer's main-thread time, which the page cannot see. Every case (test, network,
// deflate) keeps a connection per format open; a generation runs each case once, its formats in
// balanced order (A B, B A, B A, A B, ...), and generations follow one another while the next fits
// the budget, so every case gets as many trials and a busy machine takes fewer, not longer. The
// table's calls are compare's (lib/compare/statistics.js), one family. The smaller tests run too,
// and on throttled links (the userspace shaping proxy) the cases whose largest message fits the
// link in --max-link-seconds. Writes docs/results/browser.json.
import fs from 'node:fs'
import { commandLine, commaList, duration, positiveNumber, wholeNumber } from '../lib/cli/parser.js'
import { UsageError, runMain } from '../lib/errors.js'
import { createCodec } from '../lib/codecs/registry.js'
import { cellText } from '../lib/compare/results.js'
import { DEFAULT_EQUIVALENCE, simultaneousEstimates, trialOrder } from '../lib/compare/statistics.js'
import { PROFILES } from '../lib/network/profiles.js'
import { startShapingProxyWorker } from '../lib/network/proxy.js'
import { loadMessages, resolveTest } from '../lib/payloads/catalog.js'
import { startServerProcess } from '../lib/processes.js'
import { DOWN_REQUEST } from '../lib/protocol.js'
import { testLabel } from '../lib/report/report.js'
import { readMetrics } from '../lib/server/metrics-reader.js'
import { CHROMIUM, openBrowserPage } from '../tools/headless-browser.js'
import { deflatedAlone } from './support/deflate.js'
import { npmCommand, printTable, startResults } from './support/results.js'
import { median } from './support/statistics.js'

const USAGE = 'Usage: npm run bench:browser -- [--tests people,person,medium,large] [--budget 240s] [--trials N] [--messages N] ' +
  '[--throttle cable,3g|none] [--link-messages N] [--max-link-seconds S] [--chromium PATH]'
const FORMATS = ['json', 'protobuf']
const DEFLATE = [false, true]

/** What each trial measures, per message, and how the table names it; all lower is better. */
const METRICS = [
  { key: 'transfer', label: 'transfer' },
  { key: 'decode', label: 'decode' },
  { key: 'total', label: 'total' },
  { key: 'renderer', label: 'renderer CPU' }
]

const COLUMNS = ['test', 'network', 'permessage-deflate', 'trials × messages',
  ...METRICS.map(({ label }) => `${label} ms json / protobuf`), 'server encode ms json / protobuf',
  ...METRICS.map(({ label }) => `${label} protobuf/json`)]

runMain(async () => {
  const args = await commandLine(process.argv, USAGE).options({
    tests: { describe: 'comma-separated tests, each downloaded by the page', default: 'people,person,medium,large', type: 'string' },
    budget: { describe: 'generations while the next fits in this long (the warm-up one included)', default: '240s', type: 'string' },
    trials: { describe: 'exactly this many generations, whatever the budget', type: 'number' },
    messages: { describe: 'messages per trial on loopback (a test of one message, people: one)', default: 100, type: 'number' },
    throttle: { describe: 'throttled links to run too (proxy backend); none for loopback alone', default: 'cable,3g', type: 'string' },
    'link-messages': { describe: 'messages per trial on a throttled link', default: 1, type: 'number' },
    'max-link-seconds': { describe: 'a case runs on a throttled link if its largest message takes at most this long on the downlink', default: 2, type: 'number' },
    chromium: { describe: 'the Chromium to drive', default: CHROMIUM, type: 'string' }
  }).parseAsync()
  const tests = commaList(args.tests).map(resolveTest)
  const profiles = commaList(args.throttle).filter((name) => name !== 'none').map((name) => {
    if (!PROFILES[name]) throw new UsageError(`--throttle: unknown profile '${name}': expected none or some of ${Object.keys(PROFILES).join(', ')}`)
    return name
  })
  const plan = {
    budgetMs: duration('budget', args.budget),
    trials: args.trials === undefined ? null : wholeNumber('trials', args.trials, 1),
    messages: wholeNumber('messages', args.messages, 1),
    linkMessages: wholeNumber('link-messages', args.linkMessages, 1),
    maxLinkSeconds: positiveNumber('max-link-seconds', args.maxLinkSeconds)
  }
  if (!fs.existsSync(args.chromium)) throw new UsageError(`no Chromium at ${args.chromium}: apt-get install chromium (Debian's; nothing is downloaded)`)

  const results = startResults('browser', npmCommand('bench:browser'))
  const servers = await Promise.all(DEFLATE.map((deflate) => startServerProcess(deflate ? ['--compress'] : [])))
  const proxies = []
  let browser
  try {
    const { cases, leftOut } = await planCases({ tests, profiles, plan, servers, proxies })
    const opened = await openBrowserPage({ executablePath: args.chromium })
    browser = opened.browser
    const { page } = opened
    await page.goto(`${servers[0].url.replace(/^ws/, 'http')}/`)
    await page.waitForFunction(() => document.getElementById('status').textContent === 'ready')
    const cdp = await page.context().newCDPSession(page)
    await cdp.send('Performance.enable')
    await openCases(page, cases)
    const generations = await runGenerations(cases, plan, (kase, format) => measureTrial(page, cdp, kase, format))
    const chromiumVersion = browser.version()
    const { rows, family, figures } = tableOf(cases)
    printTable(COLUMNS, rows)
    results.write({ columns: COLUMNS, rows, notes: notesOf({ plan, generations, chromiumVersion, family, leftOut }), figures })
  } finally {
    await browser?.close()
    await Promise.all(proxies.map((proxy) => proxy.close()))
    await Promise.all(servers.map((server) => server.stop()))
  }
})

/**
 * The cases, loopback first, then each link: every test with deflate off and on, where its largest
 * message fits the link; a shaping proxy per link and server, pushed on `proxies` for the caller to close.
 * @returns {Promise<{cases: object[], leftOut: object[]}>}
 */
async function planCases ({ tests, profiles, plan, servers, proxies }) {
  const cases = []
  const leftOut = []
  for (const profile of ['none', ...profiles]) {
    const link = PROFILES[profile]
    const urls = link ? [] : servers.map((server) => server.url)
    if (link) {
      for (const server of servers) {
        proxies.push(await startProxy(server, link))
        urls.push(proxies.at(-1).url)
      }
    }
    for (const test of tests) {
      const linkSeconds = link && await largestMessageSeconds(test, link)
      for (const [d, deflate] of DEFLATE.entries()) {
        const where = { test: testLabel(test), profile, deflate }
        if (link && linkSeconds[d] > plan.maxLinkSeconds) {
          leftOut.push({ ...where, seconds: linkSeconds[d] })
          continue
        }
        const messages = loadMessages(test).messages.length === 1 ? 1 : link ? plan.linkMessages : plan.messages
        const trials = Object.fromEntries(FORMATS.map((format) => [format, []]))
        cases.push({ ...where, id: cases.length, name: test.name, url: urls[d], server: servers[d], messages, trials })
      }
    }
  }
  return { cases, leftOut }
}

/**
 * Opens every case's connections in the page and checks that each negotiated what its server offers:
 * the browser takes permessage-deflate wherever the server offers it, and a case that did not is no case.
 */
async function openCases (page, cases) {
  const extensions = await page.evaluate(openConnections, {
    cases: cases.map(({ id, url, name }) => ({ id, url, test: name })),
    formats: FORMATS
  })
  for (const { id, test, profile, deflate } of cases) {
    for (const format of FORMATS) {
      if (/permessage-deflate/.test(extensions[id][format]) !== deflate) {
        throw new Error(`${test} on ${profile}, ${format}: the connection's extensions are '${extensions[id][format]}' with deflate ${deflate ? 'on' : 'off'}`)
      }
    }
  }
}

/**
 * An unrecorded generation, then generations while the next fits the budget (at least two, for an
 * interval), or exactly plan.trials: each runs every case once, its formats in balanced order.
 * @returns {Promise<number>} the recorded generations
 */
async function runGenerations (cases, plan, trial) {
  const startedAt = Date.now()
  let longest = 0
  let recorded = 0
  for (let g = -1; ; g++) {
    const more = plan.trials === null
      ? recorded < 2 || Date.now() - startedAt + longest <= plan.budgetMs
      : recorded < plan.trials
    if (g >= 0 && !more) return recorded
    const began = Date.now()
    for (const kase of cases) {
      for (const index of trialOrder(FORMATS.length, Math.max(g, 0))) {
        const measured = await trial(kase, FORMATS[index])
        if (g >= 0) kase.trials[FORMATS[index]].push(measured)
      }
    }
    longest = Math.max(longest, Date.now() - began)
    if (g >= 0) recorded++
    process.stderr.write(`${g < 0 ? 'warm-up generation' : `generation ${recorded}`}: ${((Date.now() - began) / 1000).toFixed(1)} s\n`)
  }
}

/** A shaping proxy in front of a server, for one link: every connection through it gets a link of its own. */
async function startProxy (server, { up, down, rtt }) {
  const target = new URL(server.url)
  const proxy = await startShapingProxyWorker({ targetHost: target.hostname, targetPort: Number(target.port), up, down, rtt })
  return { url: `ws://${proxy.host}:${proxy.port}`, close: proxy.close }
}

/**
 * How long the test's largest message takes on the link's downlink, the more of the two formats',
 * without and with permessage-deflate (each message deflated alone: the stream's context can only make it smaller).
 * @returns {Promise<number[]>} seconds, deflate off and on
 */
async function largestMessageSeconds (test, { down }) {
  const sizes = await Promise.all(FORMATS.map(async (format) => {
    const codec = await createCodec(format, test)
    const frames = loadMessages(test).messages.map((message) => Buffer.from(codec.encode(codec.prepare(message))))
    return [Math.max(...frames.map((frame) => frame.length)), Math.max(...frames.map(deflatedAlone))]
  }))
  return DEFLATE.map((_, d) => Math.max(...sizes.map((size) => size[d])) * 8 / (down * 1000))
}

/**
 * One trial of one format, with what Chromium and the server saw around it: the page's times per
 * message, the renderer's main-thread time (DevTools Performance.getMetrics) and the server's encode
 * time (its /metrics), each averaged over the trial's messages.
 */
async function measureTrial (page, cdp, { id, server, name, messages }, format) {
  // No forced collection before a trial: DevTools' collectGarbage throws compiled code away too, and
  // protobuf.js's generated decoders then ran cold in every trial. Garbage an earlier trial left falls
  // on both formats alike, their order being balanced.
  const [rendererBefore, serverBefore] = [await rendererSeconds(cdp), await serverCodec(server, name, format)]
  const times = await page.evaluate(download, { id, format, messages, request: DOWN_REQUEST })
  const [rendererAfter, serverAfter] = [await rendererSeconds(cdp), await serverCodec(server, name, format)]
  const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length
  return {
    transfer: mean(times.map(([transfer]) => transfer)),
    decode: mean(times.map(([, decode]) => decode)),
    total: mean(times.map(([transfer, decode]) => transfer + decode)),
    renderer: (rendererAfter.task - rendererBefore.task) * 1000 / messages,
    serverEncode: (serverAfter.seconds - serverBefore.seconds) * 1000 / (serverAfter.messages - serverBefore.messages)
  }
}

/** The renderer's main-thread time so far: all its tasks, in seconds. */
async function rendererSeconds (cdp) {
  const { metrics } = await cdp.send('Performance.getMetrics')
  return { task: metrics.find((metric) => metric.name === 'TaskDuration').value }
}

/** The server's codec seconds and messages for one format and test so far. */
async function serverCodec (server, test, format) {
  const metrics = await readMetrics(server.url)
  const value = (metric) => metrics.value(metric, { format, test }) ?? 0
  return { seconds: value('wsbench_codec_seconds_total'), messages: value('wsbench_messages_total') }
}

// In the page (serialised by page.evaluate, so they use nothing from this module's scope): the
// page's own codecs (web/app.js) and protocol (lib/protocol.js), the browser's WebSocket, and
// performance.now(), which the page's cross-origin isolation makes fine-grained (5 µs).

/**
 * In the page: for every case, one connection per format, direction down, kept on
 * globalThis.benchConnections[case id][format].
 * @returns {Promise<Record<number, Record<string, string>>>} each connection's negotiated extensions
 */
async function openConnections ({ cases, formats }) {
  const { createCodec } = await import('/app.js')
  const { connectionUrl } = await import('/lib/protocol.js')
  const tests = await (await fetch('/api/tests')).json()
  // One codec per format and test, as a page loads a schema once: every case of a test decodes with the same code.
  const codecs = new Map()
  const codecOf = (format, test) => {
    const key = `${format} ${test}`
    if (!codecs.has(key)) codecs.set(key, createCodec(format, tests.find((candidate) => candidate.name === test)))
    return codecs.get(key)
  }
  const open = async ({ url, test }, format) => {
    const ws = new globalThis.WebSocket(connectionUrl(url, { test, format, direction: 'down' }))
    ws.binaryType = 'arraybuffer'
    await new Promise((resolve, reject) => {
      ws.onopen = resolve
      ws.onerror = () => reject(new Error(`cannot connect to ${ws.url}`))
    })
    return [format, { ws, codec: await codecOf(format, test) }]
  }
  const connections = await Promise.all(cases.map(async (kase) => [kase.id, Object.fromEntries(await Promise.all(formats.map((format) => open(kase, format))))]))
  globalThis.benchConnections = Object.fromEntries(connections)
  return Object.fromEntries(connections.map(([id, byFormat]) => [id, Object.fromEntries(formats.map((format) => [format, byFormat[format].ws.extensions]))]))
}

/**
 * In the page: `messages` downloads one after the other on a case's connection; for each, the
 * transfer (the request sent to the message event, ms) and the decode into the page's objects inside the handler (ms).
 */
async function download ({ id, format, messages, request }) {
  const { isErrorReply } = await import('/lib/protocol.js')
  const { ws, codec } = globalThis.benchConnections[id][format]
  return new Promise((resolve, reject) => {
    const times = []
    let sentAt = 0
    const send = () => {
      sentAt = performance.now()
      ws.send(request)
    }
    ws.onmessage = ({ data }) => {
      const receivedAt = performance.now()
      if (isErrorReply(data)) return reject(new Error(`${format}: ${data.slice(0, 300)}`))
      if (codec.decode(data) === null) return reject(new Error(`${format}: decoded nothing`))
      times.push([receivedAt - sentAt, performance.now() - receivedAt])
      if (times.length < messages) send()
      else resolve(times)
    }
    ws.onclose = ({ code }) => reject(new Error(`${format}: connection closed by the server (code ${code})`))
    send()
  })
}

/**
 * The table: one row per case, each format's medians over its trials, and protobuf's ratio to JSON
 * per metric with a simultaneous interval and a call, the whole table one family (compare's calls).
 * @returns {{rows: string[][], family: import('../lib/compare/statistics.js').Family, figures: Record<string, string>}}
 */
function tableOf (cases) {
  const cells = cases.flatMap(({ trials }) => METRICS.map(({ key }) => ({
    baseline: trials.json.map((trial) => trial[key]),
    candidate: trials.protobuf.map((trial) => trial[key]),
    better: 'lower'
  })))
  const { estimates, family } = simultaneousEstimates(cells, { margin: DEFAULT_EQUIVALENCE })
  const calls = cases.map((_, c) => Object.fromEntries(METRICS.map(({ key }, m) => [key, estimates[c * METRICS.length + m]])))
  const rows = cases.map(({ test, profile, deflate, messages, trials }, c) => [
    test, profile === 'none' ? 'loopback' : profile, deflate ? 'on' : 'off', `${trials.json.length} × ${messages}`,
    ...[...METRICS.map(({ key }) => key), 'serverEncode'].map((key) => FORMATS.map((format) => milliseconds(median(trials[format].map((trial) => trial[key])))).join(' / ')),
    ...METRICS.map(({ key }) => calls[c][key] ? cellText(calls[c][key]) : 'n/a')
  ])
  return { rows, family, figures: figuresOf(cases, calls) }
}

/** A time as the table prints it: three significant digits, at least one decimal. */
function milliseconds (ms) {
  return ms >= 100 ? ms.toFixed(1) : ms.toPrecision(3)
}

/** The seed's two headlines, people to the browser: how much faster protobuf was, without and with compression. */
const SEED = [
  { deflate: false, key: 'uncompressed', faster: '21%' },
  { deflate: true, key: 'compressed', faster: '4%' }
]

/** What a call on protobuf's total time says of a claim that protobuf is faster. */
const SEED_VERDICT = { better: 'holds', worse: 'reversed', inconclusive: 'inconclusive', equivalent: 'inconclusive (equivalent: within ±5%)' }

/**
 * Figures the docs quote in sentences: people's ratios per metric with deflate off and on
 * (people-off-total, people-cable-on-decode, ...), each of the seed's headlines beside ours with
 * its verdict (seed-uncompressed, seed-uncompressed-verdict, ...), and the answer in one clause.
 */
function figuresOf (cases, calls) {
  const figures = {}
  const loopback = {}
  cases.forEach(({ test, profile, deflate }, c) => {
    if (test !== 'people') return
    const key = `people-${profile === 'none' ? '' : `${profile}-`}${deflate ? 'on' : 'off'}`
    for (const { key: metric } of METRICS) if (calls[c][metric]) figures[`${key}-${metric}`] = cellText(calls[c][metric])
    if (profile === 'none') loopback[deflate] = calls[c]
  })
  const verdicts = SEED.filter(({ deflate }) => loopback[deflate]?.total).map(({ deflate, key, faster }) => {
    const total = loopback[deflate].total
    figures[`seed-${key}`] = `the seed: protobuf ${faster} faster; here ${cellText(total)}: ${SEED_VERDICT[total.call]}`
    figures[`seed-${key}-verdict`] = SEED_VERDICT[total.call]
    return `${faster}: ${SEED_VERDICT[total.call]}`
  })
  if (verdicts.length === SEED.length) {
    figures.answer = `protobuf took ${cellText(loopback[false].total)} of JSON's time uncompressed and ${cellText(loopback[true].total)} ` +
      `with permessage-deflate, its decode ${cellText(loopback[false].decode)} of JSON.parse's (the seed's gains: ${verdicts.join('; ')})`
  }
  return figures
}

/** How the run was made, what each figure is, and what was left out. */
function notesOf ({ plan, generations, chromiumVersion, family, leftOut }) {
  const critical = family.critical ? `a critical t of ${family.critical.toFixed(2)} over its ${family.cells} varying cells, ` : ''
  return [
    `Chromium ${chromiumVersion} (Debian's, headless, driven by playwright-core) on the page server.js serves; two server processes, permessage-deflate off and on ` +
      '(--compress; the browser negotiates it, as the connections\' extensions showed): permessage-deflate is the WebSocket counterpart of the seed\'s gzip',
    'Each case (test, network, deflate): one connection per format kept open for the run, direction down (the page asks, the server encodes ' +
      'the test\'s next message and sends it), one message at a time; after an unrecorded generation, ' +
      `${plan.trials === null ? `${generations} generations, as many as fit ${plan.budgetMs / 1000} s` : `${generations} generations`}, ` +
      'each running every case once, its formats in balanced order (A B, B A, B A, A B, ...); one codec per format and test for the whole page; ' +
      `people (a test of one message) 1 message per trial, the other tests ${plan.messages} on loopback and ${plan.linkMessages} on a throttled link ` +
      '(the userspace shaping proxy, a link of its own per connection; the page itself loaded over loopback); client and servers share the machine, unpinned',
    'Timed in the page with performance.now(), per message, averaged over a trial\'s messages: transfer, from the request sent to the message event ' +
      '(the whole message received, inflated and, for JSON\'s text frames, turned into a string; the server\'s encode included, as it was in the seed\'s ' +
      'request-to-data time; the page cannot see the first byte); decode, the page\'s own codec (web/app.js) inside the message handler: JSON.parse, ' +
      'protobuf.js decode (reflection from the served .proto), whose messages the page reads as they are (fields as properties, repeated fields as arrays; ' +
      'toObject, for code that needs plain objects, is not timed, and the seed did not call it); total, their sum, the seed\'s "time until the data reaches the browser\'s code"',
    'The page cannot see its own CPU: renderer CPU is Chromium\'s, the renderer\'s main-thread task time (DevTools protocol Performance.getMetrics, ' +
      'TaskDuration) around each trial, per message: the decode, turning text into a string, garbage collection on the main thread; inflating and ' +
      'the socket are in the network service, outside it. Server encode is the server\'s codec time per message (its /metrics), part of transfer',
    'Figures are medians over the trials. Each ratio is protobuf/json, the geometric mean of the trial pairs\' ratios, with a simultaneous interval ' +
      `(lib/compare/statistics.js, as compare: the table's cells one family, single-step max-T, ${critical}so the chance of any false call anywhere in ` +
      `the table is at most ${family.alpha * 100}%): below 1 is faster; better or worse, the interval excludes 1; equivalent, it lies within ` +
      `±${DEFAULT_EQUIVALENCE * 100}% of 1; inconclusive, neither (± the smallest difference the run could have told)`,
    ...(leftOut.length
      ? [`Left out, their largest message taking over ${plan.maxLinkSeconds} s on the link's downlink (--max-link-seconds): ` +
        leftOut.map(({ test, profile, deflate, seconds }) => `${test} on ${profile} with deflate ${deflate ? 'on' : 'off'} (${seconds.toFixed(1)} s)`).join(', ')]
      : [])
  ]
}
