// The thread --out pushes from (see stream.js): it loads the backends' senders, turns each push's
// figures into series, encodes and sends them. Its modules, heap and CPU stay off the thread that
// sends and receives the run's messages, and since it does nothing else, the CPU it spends from a
// push's arrival to its answer is what that push cost.
import fs from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
import { threadCpuNs } from '../cpu-time.js'
import { oneLine } from '../errors.js'
import { decodeFigures } from './figures.js'
import { pointsOf } from './metrics.js'

/** This thread's id, whose CPU the kernel gives (null off Linux). */
const tid = (() => {
  try {
    return fs.readlinkSync('/proc/thread-self').split('/').pop()
  } catch {
    return null
  }
})()

/** This thread's CPU so far, ns (null where the kernel does not say). */
const cpuNs = () => tid === null ? null : threadCpuNs(tid)

/** A backend's sender: remote write, or OTLP (whose exporter loads only when asked for). */
async function makeSink ({ kind, url }, options) {
  if (kind === 'prometheus-rw') return new (await import('./remote-write.js')).RemoteWrite(url, options)
  return new (await import('./otlp.js')).OtlpMetrics(url, options)
}

const { targets, sinkOptions } = workerData
const sinks = targets.map(() => null)

/** One push to every backend: each one's error, or null. */
async function push ({ runs, timestamp }) {
  const groups = runs.map(({ labels, figures }) => ({ labels, points: pointsOf(decodeFigures(figures)) }))
  return Promise.all(targets.map(async (target, index) => {
    try {
      sinks[index] ??= await makeSink({ kind: target.kind, url: new URL(target.url) }, sinkOptions)
      await sinks[index].push(groups, timestamp)
      return null
    } catch (err) {
      return oneLine(err.cause ?? err)
    }
  }))
}

parentPort.on('message', async (message) => {
  const before = cpuNs()
  if (message.type === 'open') {
    await Promise.all(targets.map(async (target, index) => {
      sinks[index] ??= await makeSink({ kind: target.kind, url: new URL(target.url) }, sinkOptions)
    }))
    parentPort.postMessage({ type: 'opened' })
  } else if (message.type === 'push') {
    const errors = await push(message)
    const after = cpuNs()
    parentPort.postMessage({ type: 'pushed', errors, cpuNs: before === null || after === null ? null : after - before })
  } else if (message.type === 'close') {
    await Promise.all(sinks.map((sink) => sink?.close?.()))
    parentPort.postMessage({ type: 'closed' })
  }
})
