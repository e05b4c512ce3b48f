import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import tls from 'node:tls'
import { X509Certificate } from 'node:crypto'
import { readCertificate, throwawayCertificate } from '../../lib/server/tls.js'
import { UsageError } from '../../lib/errors.js'

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tls-test-'))
test.after(() => fs.rmSync(dir, { recursive: true, force: true }))
const write = (name, text) => {
  const file = path.join(dir, name)
  fs.writeFileSync(file, text)
  return file
}

test('throwawayCertificate: self-signed for localhost, the loopback addresses, this machine and the hosts given, for a week, with its SHA-256', async () => {
  const certificate = await throwawayCertificate(['10.1.2.3', 'bench.example', '0.0.0.0'])
  assert.equal(certificate.throwaway, true)
  const x509 = new X509Certificate(certificate.cert)
  assert.equal(certificate.fingerprint, x509.fingerprint256)
  assert.match(certificate.fingerprint, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/)
  const names = x509.subjectAltName.split(', ')
  for (const name of ['DNS:localhost', `DNS:${os.hostname()}`, 'IP Address:127.0.0.1', 'IP Address:10.1.2.3', 'DNS:bench.example']) {
    assert.ok(names.includes(name), `${name} in ${x509.subjectAltName}`)
  }
  assert.ok(!x509.subjectAltName.includes('0.0.0.0'), 'a wildcard address is no name to connect to')
  assert.ok(x509.issuer === x509.subject && x509.verify(x509.publicKey), 'self-signed')
  const days = (Date.parse(x509.validTo) - Date.now()) / 86_400_000
  assert.ok(days > 6 && days <= 7, `valid for ${days} days`)
  // Its key is its certificate's: a TLS context takes them together.
  tls.createSecureContext({ cert: certificate.cert, key: certificate.key })
})

test('readCertificate: the files\' PEM and the certificate\'s SHA-256; every bad input one line naming the file', async () => {
  const [one, two] = await Promise.all([throwawayCertificate(), throwawayCertificate()])
  const cert = write('cert.pem', one.cert)
  const key = write('key.pem', one.key)
  assert.deepEqual(readCertificate(cert, key), { cert: one.cert, key: one.key, fingerprint: one.fingerprint, throwaway: false })
  const refusals = [
    [[path.join(dir, 'missing.pem'), key], /^--tls-cert .*missing\.pem: cannot read it \(ENOENT\)$/],
    [[cert, path.join(dir, 'missing.pem')], /^--tls-key .*missing\.pem: cannot read it \(ENOENT\)$/],
    [[write('text.pem', 'not a certificate'), key], /^--tls-cert .*text\.pem: not a PEM certificate$/],
    [[cert, write('other.pem', two.key)], /^--tls-key .*other\.pem does not match the certificate in --tls-cert .*cert\.pem$/],
    [[cert, cert], /^--tls-key .*cert\.pem: not a usable private key/]
  ]
  for (const [files, message] of refusals) {
    assert.throws(() => readCertificate(...files), (err) => err instanceof UsageError && message.test(err.message) && !err.message.includes('\n'), files.join(' '))
  }
})
