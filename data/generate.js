#!/usr/bin/env node
// Writes the built-in test payloads to data/ (or the folder given as the first argument).
// Structure is written by hand; a seeded PRNG fills the values, so every run writes identical files.
// These are each test's one message (--repeat); the streams runs send by default are built in
// memory from the same structure by lib/payloads/streams.js.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRandom } from '../lib/payloads/random.js'

const SEED = 20261122

/**
 * Builds the five classic payloads from one seed.
 * @param {number} [seed]
 * @returns {Record<string, object>} file name -> payload
 */
export function buildPayloads (seed = SEED) {
  const random = createRandom(seed)
  const int = (min, max) => min + Math.floor(random() * (max - min + 1))
  const real = (min, max) => min + random() * (max - min)
  const pick = (items) => items[int(0, items.length - 1)]
  const word = () => pick(['alpha', 'bravo', 'delta', 'orbit', 'nova', 'pixel', 'quartz', 'river', 'summit', 'tango'])
  const id = () => `${word()}-${int(100000, 999999)}`
  const timestamp = () => int(1_600_000_000_000, 1_800_000_000_000)
  const address = () => ({ street: `${int(1, 999)} ${word()} street`, city: pick(['Zürich', 'Berlin', 'Lisboa', 'Kraków', 'Osaka']), zip: String(int(10000, 99999)), country: pick(['CH', 'DE', 'PT', 'PL', 'JP']) })

  const numbers = {
    id: int(100_000_000, 2_000_000_000),
    timestamp: timestamp(),
    price: real(1e8, 1e9),
    quantity: int(1, 500),
    discount: 0,
    balance: -real(1, 100000),
    delta: -int(1, 100000),
    ratio: real(0, 1),
    temperature: real(-40, 50),
    position: { latitude: real(-90, 90), longitude: real(-180, 180), altitude: int(0, 8000) }
  }
  const strings = {
    id: id(),
    firstName: pick(['Ada', 'Linus', 'Grace', 'Ken']),
    lastName: pick(['Lovelace', 'Torvalds', 'Hopper', 'Thompson']),
    email: `${word()}@example.com`,
    status: 'active 🚀',
    note: '',
    address: { street: `${int(1, 99)} ${word()} way`, city: 'Zürich', country: 'CH' }
  }
  const item = () => ({ sku: id(), name: `${word()} ${word()}`, quantity: int(1, 9), unitPrice: real(1, 200), taxable: random() < 0.5 })
  const medium = {
    orderId: id(),
    createdAt: timestamp(),
    updatedAt: timestamp(),
    status: 'processing',
    priority: int(0, 5),
    gift: false,
    total: real(10, 2000),
    currency: 'EUR',
    tags: [word(), word(), word()],
    customer: { id: int(1, 1_000_000), name: `${word()} ${word()}`, email: `${word()}@example.org`, phone: `+41 ${int(100, 999)} ${int(1000, 9999)}`, vip: true, address: address() },
    shipping: { method: 'express', cost: real(1, 30), eta: timestamp(), tracking: id(), address: address() },
    payment: { method: 'card', last4: String(int(1000, 9999)), approved: true, amount: real(10, 2000) },
    items: [item(), item(), item()],
    metrics: { views: int(0, 1e6), clicks: int(0, 1e5), conversion: real(0, 1) }
  }
  const level = (depth) => {
    const node = { depth, name: `${word()}-${depth}`, enabled: random() < 0.5, weight: real(-1000, 1000), count: int(-50000, 50000), createdAt: timestamp(), labels: [word(), word()] }
    if (depth < 8) node.child = level(depth + 1)
    return node
  }
  const large = {
    requestId: id(),
    version: 3,
    generatedAt: timestamp(),
    account: { id: int(1, 2_000_000_000), owner: `${word()} ${word()}`, plan: 'enterprise', seats: int(5, 5000), balance: real(-1e6, 1e6), addresses: [address(), address(), address()] },
    tree: level(1),
    events: Array.from({ length: 8 }, () => ({ id: id(), type: pick(['click', 'view', 'purchase']), at: timestamp(), value: real(0, 1000), ok: random() < 0.8, user: { id: int(1, 1e6), name: word() } })),
    stats: { p50: real(0, 10), p90: real(10, 50), p99: real(50, 500), samples: int(1000, 1e9), errors: 0, rate: real(0, 1) }
  }
  const small = { id: int(1, 9), status: 'ok' }
  const person = { name: 'Jane Doe', id: 1234, email: 'janedoe@example.com', phones: [{ number: '123-1234', type: 'HOME' }] }
  const counters = { counter: Array.from({ length: 100 }, (_, i) => ({ counter: i + 1, num: int(1, 1000) })) }
  return {
    '1-numbers.json': numbers,
    '2-strings.json': strings,
    '3-medium.json': medium,
    '4-large.json': large,
    '5-small.json': small,
    'person.json': person,
    'counters.json': counters
  }
}

const isMain = process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])
if (isMain) {
  const outDir = process.argv[2] ?? path.dirname(fileURLToPath(import.meta.url))
  for (const [file, payload] of Object.entries(buildPayloads())) {
    fs.writeFileSync(path.join(outDir, file), `${JSON.stringify(payload, null, 2)}\n`)
  }
}
