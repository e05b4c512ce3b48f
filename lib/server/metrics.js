// GET /metrics: the server's counters in the Prometheus text exposition format, through prom-client,
// beside its default process metrics (CPU seconds, resident memory, event loop lag). Counters are
// read from ServerStats when scraped, so the message path pays nothing for them.
import client from 'prom-client'

/**
 * A registry of this server's metrics (one per server, so servers in one process stay apart).
 * @param {import('./stats.js').ServerStats} stats
 * @returns {client.Registry}
 */
export function createMetrics (stats) {
  const registry = new client.Registry()
  client.collectDefaultMetrics({ register: registry })
  const registers = [registry]
  const byTarget = (name, help, field) => new client.Counter({
    name,
    help,
    labelNames: ['format', 'test'],
    registers,
    collect () {
      this.reset()
      for (const { format, test, [field]: value } of stats.byTarget.values()) this.inc({ format, test }, value)
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
  byTarget('wsbench_messages_total', 'Messages decoded and answered, by format and test', 'messages')
  byTarget('wsbench_decode_errors_total', 'Messages that could not be decoded (answered ERR), by format and test', 'errors')
  total('wsbench_connections_total', 'WebSocket connections accepted', 'totalConnections')
  total('wsbench_refused_upgrades_total', 'Upgrades refused: connection limit, or no valid test, format or direction', 'refused')
  total('wsbench_unauthorized_upgrades_total', 'Upgrades refused for a missing or wrong token', 'unauthorized')
  total('wsbench_refused_schemas_total', 'Schema registrations refused', 'refusedSchemas')
  total('wsbench_protocol_errors_total', 'WebSocket protocol violations (invalid UTF-8, oversized frames)', 'protocolErrors')
  new client.Gauge({ // eslint-disable-line no-new -- registered on creation
    name: 'wsbench_open_connections',
    help: 'WebSocket connections open now',
    registers,
    collect () { this.set(stats.openConnections) }
  })
  return registry
}
