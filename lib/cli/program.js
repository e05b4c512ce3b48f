// The name a command's usage line and examples show: as run from a checkout (`node server.js`), or
// as the installed command the dispatcher ran it as (`ws-json-vs-protobuf server`).

let installedAs = null

/**
 * Called by the dispatcher (bin/ws-json-vs-protobuf.js) before it runs a command.
 * @param {string} name e.g. `ws-json-vs-protobuf server`
 */
export function runAs (name) {
  installedAs = name
}

/**
 * @param {string} checkoutName how the command is run from a checkout, e.g. `node server.js`
 * @returns {string} the name to show
 */
export function programName (checkoutName) {
  return installedAs ?? checkoutName
}

/** @returns {boolean} whether the dispatcher ran this command (prebuilt help names the checkout's scripts) */
export function dispatched () {
  return installedAs !== null
}
