// The script each worker of `node server.js --processes N` runs (node:cluster forks it): serve on
// the shared port, answer the primary's questions, say if its broker goes away, and stop when told.
// Signals are the primary's to handle, so that a Ctrl-C, which reaches every process, still ends
// with the summed final line. A worker whose primary is gone exits at once (node:cluster sees to that).
import { startServer } from './server.js'
import { answer, OPTIONS_ENV, Questions, TAG } from './cluster-ipc.js'

async function serveClusterWorker () {
  const ignore = () => {}
  process.on('SIGINT', ignore)
  process.on('SIGTERM', ignore)
  const questions = new Questions(process)
  let server
  try {
    server = await startServer({ ...JSON.parse(process.env[OPTIONS_ENV]), exposition: () => questions.ask('exposition') })
  } catch (err) {
    process.send({ [TAG]: 'failed', reason: err.message }, () => process.disconnect())
    return
  }
  process.on('message', (message) => {
    switch (message?.[TAG]) {
      case 'answer': return questions.settle(message)
      case 'snapshot': return answer(process, message, () => server.stats.snapshot())
      case 'metrics': return answer(process, message, () => server.metrics())
      // Once the final counters are sent, disconnecting ends this process, handles or not.
      case 'close': return answer(process, message, async () => {
        await server.close()
        return server.stats.snapshot()
      }).then(() => { if (process.connected) process.disconnect() })
    }
  })
  // A broker that goes away ends the fan-out: the primary stops the server with the reason.
  server.lost.then((reason) => { if (process.connected) process.send({ [TAG]: 'lost', reason }) })
  process.send({ [TAG]: 'listening', address: { url: server.url, host: server.host, port: server.port } })
}

serveClusterWorker()
