// The series --out streams, one definition each: its name, what it counts, its unit, and how it is
// read from a run's figures. Prometheus's conventions (base units, counters ending in _total); k6's
// names where the meaning is the same, so dashboards made for k6 read them.

/**
 * @typedef {object} MetricDefinition
 * @property {string} name the name without a unit or _total: OpenTelemetry's name for it
 * @property {'counter'|'gauge'|'histogram'} type
 * @property {'s'|''} unit seconds, or a count
 * @property {string} help
 * @property {(figures: import('./figures.js').Figures) => number|import('hdr-histogram-js').Histogram|null} read
 *   its value (a histogram's in µs), or null when the run has none (not sent)
 */

/** @type {MetricDefinition[]} */
export const METRICS = [
  counter('k6_ws_msgs_sent', 'Messages sent in the measured phase', (f) => f.messages.sent),
  counter('wsbench_client_messages_acked', 'Messages acknowledged by their reply (their rate: replies per second)', (f) => f.messages.acked),
  counter('wsbench_client_message_errors', 'Messages answered with an error reply', (f) => f.messages.errors),
  counter('wsbench_client_messages_lost', 'Messages with no reply: timed out, stopped, or on a connection that closed', (f) => f.messages.lost),
  counter('k6_data_sent', 'Bytes written on the connections\' sockets in the measured phase (frame headers and masks, TLS, included)', (f) => f.bytes.written),
  counter('k6_data_received', 'Bytes read on the connections\' sockets in the measured phase', (f) => f.bytes.read),
  counter('k6_ws_sessions', 'WebSocket connections opened, reconnections included', (f) => f.connect?.totalCount ?? 0),
  counter('wsbench_client_connect_failures', 'Connection attempts that did not open', (f) => f.connectFailures),
  counter('wsbench_client_reconnects', 'Connections that dropped and came back (--reconnect; fan-out subscribers)', (f) => f.reconnects),
  counter('wsbench_client_cpu', 'The client process\'s CPU time, user and system, over the measured phase', (f) => f.cpuUs / 1e6, 's'),
  counter('wsbench_client_fanout_deliveries', 'Fan-out: measured publishes delivered, once per subscriber', (f) => f.fanout?.delivered ?? null),
  counter('wsbench_client_fanout_lost', 'Fan-out: deliveries expected (publishes times subscribers) and not made; sent once the publisher\'s END tells how many were published', (f) => f.fanout?.lost ?? null),
  gauge('wsbench_client_stage', '--stages: the stage under way, from 1', (f) => f.stage),
  histogram('wsbench_client_latency', 'Each reply\'s latency (open loop: from its message\'s due time; fan-out: publish to delivery)', (f) => f.latency),
  histogram('wsbench_client_send_lag', 'Open loop: how late each message left behind its due time', (f) => f.sendLag),
  histogram('k6_ws_connecting', 'How long each connection took to open: TCP, TLS and the WebSocket upgrade', (f) => f.connect),
  histogram('wsbench_client_fanout_spread', 'Fan-out: each publish\'s spread, from its first delivery here to its last', (f) => f.fanout?.spread ?? null)
]

function counter (name, help, read, unit = '') {
  return { name, type: 'counter', unit, help, read }
}

function gauge (name, help, read) {
  return { name, type: 'gauge', unit: '', help, read }
}

function histogram (name, help, read) {
  return { name, type: 'histogram', unit: 's', help, read }
}

/**
 * A metric's name in Prometheus: its unit's suffix, and _total for a counter (as Prometheus's own
 * OTLP receiver names what OpenTelemetry sends).
 * @param {MetricDefinition} metric
 * @returns {string}
 */
export function prometheusName ({ name, type, unit }) {
  return `${name}${unit === 's' ? '_seconds' : ''}${type === 'counter' ? '_total' : ''}`
}

/**
 * The labels every series of a run carries, --tag's included.
 * @param {object} run what the report names: format, test, direction
 * @param {Record<string, string>} tags --tag key=value, the run id (testid) among them
 * @param {{host: string, instance: string}} where the host and the process (host:pid) that measured
 * @returns {Record<string, string>}
 */
export function runLabels ({ format, test, direction }, tags, { host, instance }) {
  return { test: String(test), format, direction: direction ?? 'up', host, instance, ...tags }
}

/** The labels of every series --out sends, which --tag may not set. */
export const RUN_LABELS = ['test', 'format', 'direction', 'host', 'instance']

/**
 * What one push sends: every metric the run has, with its value (a histogram's in µs).
 * @param {import('./figures.js').Figures} figures
 * @returns {Array<{metric: MetricDefinition, value: number|import('hdr-histogram-js').Histogram}>}
 */
export function pointsOf (figures) {
  const points = []
  for (const metric of METRICS) {
    const value = metric.read(figures)
    if (value !== null && value !== undefined) points.push({ metric, value })
  }
  return points
}
