// GET /metrics: the server's counters in the Prometheus text exposition format, through prom-client,
// beside its default process metrics (CPU seconds, resident memory, event loop lag). Counters are
// read from ServerStats when scraped, so the message path pays nothing for them. A server of several
// processes sums theirs with prom-client's cluster aggregation.
import client from 'prom-client'

/** The Prometheus text exposition format's content type, which every registry here answers in. */
export const METRICS_CONTENT_TYPE = client.Registry.PROMETHEUS_CONTENT_TYPE

/**
 * A registry of this process's default metrics alone: CPU seconds, resident memory, event loop lag.
 * @param {Record<string, string>} [tags] labels on every series (--tag: the run id)
 * @returns {client.Registry}
 */
export function createProcessMetrics (tags = {}) {
  const registry = new client.Registry()
  registry.setDefaultLabels(tags)
  client.collectDefaultMetrics({ register: registry })
  return registry
}

/**
 * The exposition text of several processes' metrics taken together, as prom-client aggregates a
 * cluster's: counters and most gauges summed, version labels taken once, start times left out.
 * @param {object[][]} perProcess each process's `registry.getMetricsAsJSON()`
 * @returns {Promise<string>}
 */
export function aggregateMetrics (perProcess) {
  return sumMetrics(perProcess).metrics()
}

/**
 * Several processes' metrics as one registry, as prom-client aggregates a cluster's.
 * @param {object[][]} perProcess each process's `registry.getMetricsAsJSON()`
 * @returns {client.Registry}
 */
export function sumMetrics (perProcess) {
  return client.AggregatorRegistry.aggregate(perProcess)
}

/**
 * A registry of this server's metrics (one per server, so servers in one process stay apart).
 * @param {import('./stats.js').ServerStats} stats
 * @param {Record<string, string>} [tags] labels on every series (--tag: the run id, so that a dashboard
 *   joins them with the clients' streamed series)
 * @returns {client.Registry}
 */
export function createMetrics (stats, tags = {}) {
  const registry = createProcessMetrics(tags)
  const registers = [registry]
  const byTarget = (name, help, field, scale = 1) => new client.Counter({
    name,
    help,
    labelNames: ['format', 'test'],
    registers,
    collect () {
      this.reset()
      for (const { format, test, [field]: value } of stats.byTarget.values()) this.inc({ format, test }, value * scale)
    }
  })
  const total = (name, help, field) => new client.Counter({
    name,
    help,
    registers,
    collect () {
      this.reset()
      this.inc(stats[field])
    }
  })
  byTarget('wsbench_messages_total', 'Messages decoded and answered (fan-out: publishes), by format and test', 'messages')
  byTarget('wsbench_fanout_deliveries_total', 'Fan-out deliveries: publishes sent to a subscriber, by format and test', 'deliveries')
  byTarget('wsbench_codec_seconds_total', 'Time spent in the codec: decoding messages and encoding replies, by format and test', 'codecMs', 1e-3)
  byTarget('wsbench_decode_errors_total', 'Messages that could not be decoded (answered ERR), by format and test', 'errors')
  total('wsbench_connections_total', 'WebSocket connections accepted', 'totalConnections')
  total('wsbench_refused_upgrades_total', 'Upgrades refused: connection limit, or no valid test, format or direction', 'refused')
  total('wsbench_unauthorized_upgrades_total', 'Upgrades refused for a missing or wrong token', 'unauthorized')
  total('wsbench_refused_schemas_total', 'Schema registrations refused', 'refusedSchemas')
  total('wsbench_dropped_connections_total', 'Connections closed unaccepted, at the socket or open-file limit', 'dropped')
  total('wsbench_protocol_errors_total', 'WebSocket protocol violations (invalid UTF-8, oversized frames)', 'protocolErrors')
  total('wsbench_slow_subscribers_dropped_total', 'Fan-out subscribers dropped for more than --max-buffered bytes unsent', 'slowSubscribers')
  total('wsbench_fanout_replayed_total', 'Fan-out publishes sent again to subscribers that came back asking for them (--replay)', 'replayed')
  total('wsbench_handshake_timeouts_total', 'Connections closed for not finishing their upgrade within the handshake timeout', 'handshakeTimeouts')
  new client.Gauge({ // eslint-disable-line no-new -- registered on creation
    name: 'wsbench_open_connections',
    help: 'WebSocket connections open now',
    registers,
    collect () { this.set(stats.openConnections) }
  })
  new client.Gauge({ // eslint-disable-line no-new -- registered on creation
    name: 'wsbench_peak_connections_per_100ms',
    help: 'The most WebSocket connections accepted in any 100 ms (a window sliding at 10 ms) since the server started (several processes: theirs summed)',
    registers,
    collect () { this.set(stats.peakOpenedPer100ms) }
  })
  new client.Gauge({ // eslint-disable-line no-new -- registered on creation
    name: 'wsbench_fanout_subscribers',
    help: 'Fan-out subscribers connected now',
    registers,
    collect () { this.set(stats.subscribers) }
  })
  return registry
}
