// One worker thread of --workers: prepares the same test and codec, runs its share of the load,
// and posts its report (histograms encoded) back to the main thread.
import { parentPort, workerData } from 'node:worker_threads'
import { measure, prepareRun } from './measure.js'
import { addCodecModules } from '../codecs/registry.js'
import { LiveFigures, encodeFigures } from '../outputs/figures.js'

const { run, connectUrl, network } = workerData
const controller = new AbortController()
// --out: the main thread asks for this thread's figures when its timer pushes them.
const live = workerData.live ? new LiveFigures() : undefined
parentPort.on('message', async (message) => {
  if (message === 'stop') controller.abort('interrupted by SIGINT')
  if (message === 'figures') parentPort.postMessage({ figures: encodeFigures(await live.read()) })
})

try {
  // The main thread already checked the modules and the payload and told the user of any differences.
  await addCodecModules(run.codecModules)
  const prepared = await prepareRun(run.format, run)
  const report = await measure(prepared, run.load, {
    connectUrl,
    network,
    signal: controller.signal,
    live,
    onTick: (progress) => parentPort.postMessage({ progress })
  })
  parentPort.postMessage({ report })
} catch (err) {
  parentPort.postMessage({ error: err.message })
}
parentPort.close()
