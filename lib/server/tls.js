// The server's certificate: one the user gives (--tls-cert, --tls-key), checked before any port is
// bound, or a throwaway one made for a quick run (--tls) and for compare --tls.
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import tls from 'node:tls'
import { X509Certificate } from 'node:crypto'
import { UsageError } from '../errors.js'

/** A throwaway certificate lasts this long: a run, not a deployment. */
const THROWAWAY_DAYS = 7

/**
 * @typedef {object} Certificate what a TLS server needs, as PEM text (it crosses to --processes workers as JSON)
 * @property {string} cert the certificate (chain)
 * @property {string} key its private key
 * @property {string} fingerprint SHA-256 of the certificate, colon-separated hex
 * @property {boolean} throwaway made for this run (self-signed), not the user's
 */

/**
 * Reads a certificate and its key, and checks that they belong together.
 * @param {string} certFile PEM
 * @param {string} keyFile PEM
 * @returns {Certificate}
 * @throws {UsageError} an unreadable file, one that is not PEM, or a key that does not match
 */
export function readCertificate (certFile, keyFile) {
  const read = (option, file) => {
    try {
      return fs.readFileSync(file, 'utf8')
    } catch (err) {
      throw new UsageError(`${option} ${file}: cannot read it (${err.code ?? err.message})`)
    }
  }
  const cert = read('--tls-cert', certFile)
  const key = read('--tls-key', keyFile)
  let x509
  try {
    x509 = new X509Certificate(cert)
  } catch {
    throw new UsageError(`--tls-cert ${certFile}: not a PEM certificate`)
  }
  try {
    tls.createSecureContext({ cert, key })
  } catch (err) {
    const mismatch = /key values mismatch|KEY_VALUES_MISMATCH/i.test(`${err.code} ${err.message}`)
    throw new UsageError(mismatch
      ? `--tls-key ${keyFile} does not match the certificate in --tls-cert ${certFile}`
      : `--tls-key ${keyFile}: not a usable private key (${err.message.split('\n')[0]})`)
  }
  return { cert, key, fingerprint: x509.fingerprint256, throwaway: false }
}

/**
 * Makes a self-signed certificate (ECDSA P-256, SHA-256) for localhost, 127.0.0.1, ::1, this
 * machine's name and `hosts`, valid for a week. Clients verify it with it as their CA (--ca), or
 * skip verification (--insecure).
 * @param {string[]} [hosts] more names or addresses it must be valid for (the --host listened on)
 * @returns {Promise<Certificate>}
 */
export async function throwawayCertificate (hosts = []) {
  const { default: selfsigned } = await import('selfsigned')
  const names = new Set(['localhost', os.hostname(), '127.0.0.1', '::1', ...hosts])
  // A wildcard address is no name a client connects to.
  for (const wildcard of ['0.0.0.0', '::', '']) names.delete(wildcard)
  const altNames = [...names].map((name) => net.isIP(name) ? { type: 7, ip: name } : { type: 2, value: name })
  const notBeforeDate = new Date()
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'ws-json-vs-protobuf throwaway' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate: new Date(notBeforeDate.getTime() + THROWAWAY_DAYS * 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames }
    ]
  })
  const fingerprint = new X509Certificate(pems.cert).fingerprint256
  return { cert: pems.cert, key: pems.private, fingerprint, throwaway: true }
}
