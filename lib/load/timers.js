// Named timers of one owner: replacing one by name clears the old, and clearAll ends them all.

/** Timers by name, all cleared at once when their owner (a phase, the subscribers) ends. */
export class Timers {
  constructor () {
    this.handles = new Map()
  }

  every (name, ms, callback) {
    this.clear(name)
    this.handles.set(name, setInterval(callback, ms))
  }

  after (name, ms, callback) {
    this.clear(name)
    this.handles.set(name, setTimeout(callback, ms))
  }

  clear (name) {
    clearTimeout(this.handles.get(name)) // clears an interval too
    this.handles.delete(name)
  }

  clearAll () {
    for (const name of [...this.handles.keys()]) this.clear(name)
  }
}
