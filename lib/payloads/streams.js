// Streams of messages that vary as real traffic does: for each built-in test, a seeded sequence of
// messages with the keys and structure of its one committed payload, whose values move the way
// real ones do (ids and timestamps that climb with jitter, prices that random-walk, counts, statuses
// from a realistic set, names, cities and words from lists too long to be trivially compressible,
// short free text). One message sent over and over lets permessage-deflate match each message
// against its identical predecessor, which no real stream allows. Built in memory from the seed,
// so the client, the server and the browser hold the same messages without committed files.
//
// Every field keeps its JSON kind in every message (an integer stays an integer, a non-integer is
// never integral, a string stays a string), so each codec's derived schema fits every message, and
// every value fits the test's .proto exactly (int32 ranges, int64 timestamps, doubles).
import { createSampler, decimal } from './random.js'

/** The seed every stream is built from (each test mixes in its own offset). */
export const STREAM_SEED = 20261123

/**
 * Bytes of JSON one cycle of a stream holds, at least: many times deflate's 32 KiB window, so no
 * message is ever compressed against an identical copy of itself.
 */
export const STREAM_JSON_BYTES = 512 * 1024

const list = (text) => Object.freeze(text.trim().split(/\s+/))
const FIRST_NAMES = list(`Ada Linus Grace Ken Margaret Dennis Barbara Alan Frances Edsger Radia Tim Hedy Donald Katherine
  John Sophie Lukas Mia Noah Emma Leon Hannah Paul Lea Jonas Clara Elias Lina Felix Marta Piotr Zofia Jakub Ana Joao Beatriz
  Tiago Ines Hiro Yuki Sora Aiko Kenji Mei Chen Wei Omar Layla Amir Nora Ivan Olga Pablo Lucia Mateo Sara Liam Ava Ethan Chloe
  Oscar Elena Marco Giulia Luca Freya Erik Astrid Nils Ingrid Kofi Amara Zane Priya Arjun Ravi Anika Diego Camila`)
const LAST_NAMES = list(`Lovelace Torvalds Hopper Thompson Hamilton Ritchie Liskov Turing Allen Dijkstra Perlman Berners
  Lamarr Knuth Johnson Muller Schmidt Schneider Fischer Weber Meyer Wagner Becker Hoffmann Kowalski Nowak Wisniewski Silva
  Santos Ferreira Pereira Costa Tanaka Suzuki Takahashi Watanabe Ito Nakamura Kobayashi Yamamoto Wang Li Zhang Liu Garcia
  Martinez Lopez Gonzalez Rossi Russo Ferrari Esposito Bianchi Dubois Martin Bernard Moreau Laurent Jensen Nielsen Hansen
  Larsen Andersson Berg Novak Horvat Kovac Mensah Okafor Patel Sharma Gupta Khan Ali Haddad Cohen Levi Murphy Kelly Walsh`)
const CITIES = Object.freeze([['Zürich', 'CH'], ['Genève', 'CH'], ['Basel', 'CH'], ['Bern', 'CH'], ['Lausanne', 'CH'],
  ['Berlin', 'DE'], ['München', 'DE'], ['Hamburg', 'DE'], ['Köln', 'DE'], ['Frankfurt', 'DE'], ['Leipzig', 'DE'],
  ['Lisboa', 'PT'], ['Porto', 'PT'], ['Braga', 'PT'], ['Coimbra', 'PT'], ['Kraków', 'PL'], ['Warszawa', 'PL'],
  ['Gdańsk', 'PL'], ['Wrocław', 'PL'], ['Poznań', 'PL'], ['Osaka', 'JP'], ['Tokyo', 'JP'], ['Kyoto', 'JP'], ['Sapporo', 'JP'],
  ['Nagoya', 'JP'], ['Paris', 'FR'], ['Lyon', 'FR'], ['Marseille', 'FR'], ['Toulouse', 'FR'], ['Madrid', 'ES'],
  ['Barcelona', 'ES'], ['Sevilla', 'ES'], ['Valencia', 'ES'], ['Milano', 'IT'], ['Roma', 'IT'], ['Torino', 'IT'],
  ['Napoli', 'IT'], ['Wien', 'AT'], ['Graz', 'AT'], ['Praha', 'CZ'], ['Brno', 'CZ'], ['København', 'DK'],
  ['Stockholm', 'SE'], ['Göteborg', 'SE'], ['Oslo', 'NO'], ['Helsinki', 'FI'], ['Dublin', 'IE'], ['Amsterdam', 'NL'],
  ['Rotterdam', 'NL'], ['Bruxelles', 'BE']].map(Object.freeze))
const STREETS = list(`Bahnhof Linden Haupt Schiller Goethe Garten Kirch Berg Wald Mühlen Rosen Flora Augusta Liberdade
  Castilho Marszałkowska Floriańska Sakura Ginza Rivoli Victor Hugo Gran Via Dante Verdi Garibaldi Ring Park Lake River Hill
  Mill Station Market Church Harbour Bridge Meadow Orchard Cedar Maple Oak Birch Elm Willow`)
const STREET_KINDS = list('street way road avenue lane strasse gasse rua ulica place')
const WORDS = list(`alpha bravo delta orbit nova pixel quartz river summit tango amber cobalt ember falcon glacier harbor
  indigo jasper kestrel lumen meadow nimbus onyx prism quill raven sable tundra umber vertex willow xenon yonder zephyr
  aurora basalt cinder dune echo fjord granite helix iris juniper krypton lotus magnet nectar oasis pepper quest ridge
  sierra talon ultra vortex wander yarrow zenith arcade beacon canyon dynamo ferry garnet hollow island jungle kiln ledger
  mosaic nomad otter pylon quiver rocket signal timber unity velvet walnut anchor bamboo comet drift fable`)
const DOMAINS = list('example.com example.org mail.example.net inbox.example.io post.example.de web.example.fr example.pl')
const PHRASES = list(`thanks leave at the door please call before delivery fragile handle with care second floor ring twice
  back office gate code needed no rush whenever works great service again soon weekend only after six pm`)

/**
 * A short free-text note: empty most of the time, otherwise a few words of varying length.
 * @param {ReturnType<typeof createSampler>} draw
 */
function note (draw) {
  if (draw.chance(0.55)) return ''
  const start = draw.int(0, PHRASES.length - 1)
  return PHRASES.slice(start, start + draw.int(1, 6)).join(' ')
}

/** Someone's name, email and phone, drawn together so they agree. */
function personOf (draw) {
  const first = draw.pick(FIRST_NAMES)
  const last = draw.pick(LAST_NAMES)
  const email = `${first}.${last}${draw.chance(0.5) ? draw.int(1, 99) : ''}@${draw.pick(DOMAINS)}`.toLowerCase()
  return { first, last, email }
}

function addressOf (draw) {
  const [city, country] = draw.pick(CITIES)
  return { street: `${draw.skewed(1, 999)} ${draw.pick(STREETS)} ${draw.pick(STREET_KINDS)}`, city, zip: String(draw.int(10000, 99999)), country }
}

/** An identifier as services print them: a word and a number that climbs. */
const sequenceId = (draw, sequence) => `${draw.pick(WORDS)}-${sequence}`

/**
 * A clock in epoch milliseconds that moves forward by a jittered step per message.
 * @returns {(minStep: number, maxStep: number) => number}
 */
function clock (draw, start) {
  let now = start
  return (minStep, maxStep) => (now += draw.int(minStep, maxStep))
}

/** A value that random-walks by up to ±step per call, kept within [min, max]. */
function walk (draw, start, step, min, max) {
  let value = start
  return () => (value = Math.min(max, Math.max(min, value + draw.real(-step, step))))
}

// Each builder returns a function that makes the next message of its stream.
const BUILDERS = {
  numbers (draw) {
    const time = clock(draw, 1_763_900_000_000)
    let id = 1_690_289_448
    const price = walk(draw, 102_852_454, 40_000, 1e8, 1e9)
    const balance = walk(draw, -55_278, 900, -100_000, -1)
    const temperature = walk(draw, 18, 0.4, -40, 50)
    const latitude = walk(draw, 47.376887, 0.002, -90, 90)
    const longitude = walk(draw, 8.541694, 0.002, -180, 180)
    const altitude = walk(draw, 408, 3, 0, 8000)
    return () => {
      const views = draw.int(1000, 900_000)
      return {
        id: (id += draw.int(1, 40)),
        timestamp: time(5, 900),
        price: decimal(price(), 2),
        quantity: draw.skewed(1, 500),
        discount: draw.chance(0.7) ? 0 : draw.pick([5, 10, 15, 20, 25, 50]),
        balance: decimal(balance(), 2),
        delta: -draw.skewed(1, 100_000),
        // A computed share (one count over another): every digit of the double, as JSON.stringify writes it.
        ratio: draw.int(1, views - 1) / views,
        // A sensor's float32 reading, widened to a double as services do: every digit of it shows.
        temperature: Math.fround(decimal(temperature(), 2)),
        position: {
          latitude: decimal(latitude(), 7),
          longitude: decimal(longitude(), 7),
          altitude: Math.round(altitude())
        }
      }
    }
  },
  strings (draw) {
    let sequence = 366_113
    return () => {
      const { first, last, email } = personOf(draw)
      const { street, city, country } = addressOf(draw)
      return {
        id: sequenceId(draw, (sequence += draw.int(1, 9))),
        firstName: first,
        lastName: last,
        email,
        status: draw.pick(['active 🚀', 'active 🚀', 'active', 'away 🌙', 'busy ⛔', 'offline', 'in a meeting 📅', 'on holiday 🌴', 'do not disturb']),
        note: note(draw),
        address: { street, city, country }
      }
    }
  },
  medium (draw) {
    const time = clock(draw, 1_763_900_000_000)
    let sequence = 489_498
    // A catalogue customers order from again and again, as shops do.
    const products = Array.from({ length: 400 }, () => ({ sku: `${draw.pick(WORDS)}-${draw.int(100000, 999999)}`, name: `${draw.pick(WORDS)} ${draw.pick(WORDS)}`, unitPrice: decimal(draw.int(1, 199) + 0.99, 2), taxable: draw.chance(0.8) }))
    return () => {
      const createdAt = time(50, 20_000)
      const items = Array.from({ length: draw.int(1, 5) }, () => {
        const { sku, name, unitPrice, taxable } = draw.pick(products)
        return { sku, name, quantity: draw.skewed(1, 9), unitPrice, taxable }
      })
      const shippingCost = decimal(draw.pick([4.9, 6.9, 9.9, 14.9, 29.9]), 2)
      const total = decimal(items.reduce((sum, item) => sum + item.quantity * item.unitPrice, shippingCost), 2)
      const { first, last, email } = personOf(draw)
      const views = draw.int(100, 1_000_000)
      const home = addressOf(draw)
      return {
        orderId: sequenceId(draw, (sequence += draw.int(1, 5))),
        createdAt,
        updatedAt: createdAt + draw.int(0, 3_600_000),
        status: draw.pick(['pending', 'processing', 'processing', 'processing', 'shipped', 'shipped', 'delivered', 'cancelled', 'refunded']),
        priority: draw.skewed(0, 5),
        gift: draw.chance(0.1),
        total,
        currency: draw.pick(['EUR', 'EUR', 'EUR', 'CHF', 'USD', 'GBP', 'PLN', 'JPY']),
        tags: Array.from({ length: draw.int(1, 5) }, () => draw.pick(WORDS)),
        customer: { id: draw.int(1, 1_000_000), name: `${first} ${last}`, email, phone: `+${draw.pick([41, 49, 351, 48, 81, 33])} ${draw.int(100, 999)} ${draw.int(1000, 9999)}`, vip: draw.chance(0.15), address: home },
        shipping: { method: draw.pick(['standard', 'standard', 'express', 'pickup', 'same-day']), cost: shippingCost, eta: createdAt + draw.int(1, 7) * 86_400_000 + draw.int(0, 86_399_999), tracking: sequenceId(draw, draw.int(100000, 999999)), address: draw.chance(0.7) ? home : addressOf(draw) },
        payment: { method: draw.pick(['card', 'card', 'card', 'paypal', 'sepa', 'apple-pay', 'twint']), last4: String(draw.int(1000, 9999)), approved: draw.chance(0.95), amount: total },
        items,
        metrics: { views, clicks: draw.int(0, views - 1), conversion: draw.int(1, views - 1) / views }
      }
    }
  },
  large (draw) {
    const time = clock(draw, 1_763_900_000_000)
    let sequence = 127_044
    let samples = 595_871_828
    const accounts = Array.from({ length: 60 }, () => ({ id: draw.int(1, 2_000_000_000), owner: `${draw.pick(FIRST_NAMES)} ${draw.pick(LAST_NAMES)}`, plan: draw.pick(['free', 'team', 'business', 'enterprise']), seats: draw.skewed(5, 5000), balance: decimal(draw.real(-1e6, 1e6), 2), addresses: [addressOf(draw), addressOf(draw), addressOf(draw)] }))
    const level = (depth, at) => {
      const node = { depth, name: `${draw.pick(WORDS)}-${depth}`, enabled: draw.chance(0.6), weight: draw.real(-1000, 1000), count: draw.int(-50000, 50000), createdAt: at - draw.int(0, 86_400_000), labels: [draw.pick(WORDS), draw.pick(WORDS)] }
      if (depth < 8) node.child = level(depth + 1, at)
      return node
    }
    return () => {
      const generatedAt = time(20, 5_000)
      const account = draw.pick(accounts)
      // An account's balance moves with every report about it.
      account.balance = decimal(account.balance + draw.real(-500, 500), 2)
      let at = generatedAt - 60_000
      const events = Array.from({ length: 8 }, () => {
        const type = draw.pick(['view', 'view', 'view', 'click', 'click', 'scroll', 'add-to-cart', 'purchase', 'login'])
        return { id: sequenceId(draw, draw.int(100000, 999999)), type, at: (at += draw.int(10, 7_000)), value: decimal(type === 'purchase' ? draw.real(5, 1000) : draw.real(0, 100), 2), ok: draw.chance(0.9), user: { id: draw.int(1, 1_000_000), name: draw.pick(FIRST_NAMES).toLowerCase() } }
      })
      const p50 = draw.real(0.5, 10)
      const p90 = p50 + draw.real(5, 40)
      samples += draw.int(1000, 100_000)
      return {
        requestId: sequenceId(draw, (sequence += draw.int(1, 9))),
        version: 3,
        generatedAt,
        account: { ...account, addresses: account.addresses.map((address) => ({ ...address })) },
        tree: level(1, generatedAt),
        events,
        stats: {
          p50,
          p90,
          p99: p90 + draw.real(10, 450),
          samples,
          errors: draw.chance(0.8) ? 0 : draw.skewed(1, 200),
          rate: draw.real(0, 1)
        }
      }
    }
  },
  small (draw) {
    return () => ({ id: draw.int(1, 99), status: draw.pick(['ok', 'ok', 'ok', 'ok', 'ok', 'pending', 'error', 'done', 'retry']) })
  },
  person (draw) {
    let id = 1234
    return () => {
      const { first, last, email } = personOf(draw)
      return {
        name: `${first} ${last}`,
        id: (id += draw.int(1, 20)),
        email,
        phones: [{ number: `${draw.int(100, 999)}-${draw.int(1000, 9999)}`, type: draw.pick(['MOBILE', 'MOBILE', 'HOME', 'WORK']) }]
      }
    }
  },
  counters (draw) {
    // Counters only go up: each message is a snapshot of 100 of them.
    const nums = Array.from({ length: 100 }, () => draw.int(1, 1000))
    return () => ({ counter: nums.map((_, i) => ({ counter: i + 1, num: (nums[i] += draw.int(0, 25)) })) })
  }
}

/**
 * Whether a built-in test has a stream (people, 50,000 varied persons in one 12.9 MB message, has not).
 * @param {{name: string}} test
 * @returns {boolean}
 */
export const hasStream = (test) => Object.hasOwn(BUILDERS, test.name)

/**
 * The test's stream: `count` messages built from the seed, the same on every run and machine.
 * @param {import('./catalog.js').TestInfo} test a test with a stream ({@link hasStream})
 * @param {number} count messages
 * @param {number} [seed]
 * @returns {object[]}
 */
export function buildStream (test, count, seed = STREAM_SEED) {
  const next = BUILDERS[test.name](createSampler(seed + Object.keys(BUILDERS).indexOf(test.name)))
  return Array.from({ length: count }, next)
}
