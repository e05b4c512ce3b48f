// Liveness (lib/load/liveness.js) on a clock of the test's own: sweeps every half heartbeat,
// deliveries at their scheduled times or late, a loop running late, pings answered or not.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Liveness } from '../../lib/load/liveness.js'

const HEARTBEAT_MS = 100
/** One publish a second: the next is due 1000 ms after the last one's scheduled time. */
const RATE = 1

function subscriber () {
  return {
    open: true,
    ended: false,
    lastHeardAt: 0,
    latestDueUs: 0,
    pingedAt: 0,
    closedBy: null,
    ws: {
      pings: 0,
      terminated: false,
      ping () { this.pings++ },
      terminate () { this.terminated = true }
    }
  }
}

/** Liveness at time 0 (the epoch too: ms and µs read alike), and a clock that sweeps on time. */
function watch (count, options = {}) {
  const liveness = new Liveness({ heartbeatMs: HEARTBEAT_MS, rate: RATE, ...options }, 0)
  const subscribers = Array.from({ length: count }, subscriber)
  liveness.start(subscribers, 0)
  let now = 0
  const clock = {
    liveness,
    subscribers,
    now: () => now,
    /** Sweeps on time until `until` ms; `before(now)` runs first at each sweep (deliveries, pongs). */
    sweepUntil (until, before = () => {}) {
      while (now + liveness.sweepMs <= until) {
        now += liveness.sweepMs
        before(now)
        liveness.sweep(subscribers, now)
      }
    },
    /** The loop stalls this long: the next sweep comes that late. */
    stall (ms) {
      now += liveness.sweepMs + ms
      liveness.sweep(subscribers, now)
    }
  }
  return clock
}

/** Publish `seq` (scheduled at seq seconds) reaches a subscriber `lateMs` after it was due. */
function deliver (clock, target, seq, lateMs = 1) {
  return (now) => {
    if (now < seq * 1000 + lateMs || target.latestDueUs >= seq * 1e6) return
    target.lastHeardAt = now
    target.latestDueUs = seq * 1e6
    clock.liveness.delivered(lateMs * 1000)
  }
}

test('deliveries when they are due: nobody is pinged, however far apart the publishes', () => {
  const clock = watch(3)
  clock.sweepUntil(5000, (now) => {
    for (const target of clock.subscribers) for (let seq = 0; seq <= 5; seq++) deliver(clock, target, seq, 2)(now)
  })
  assert.equal(clock.liveness.pings, 0)
  assert.deepEqual(clock.subscribers.map((target) => target.ws.pings), [0, 0, 0])
  assert.deepEqual(clock.liveness.result(clock.now()), { pings: 0, suspendedMs: 0, closes: { link: 0, server: 0, generator: 0 } })
})

test('a delivery overdue by more than a heartbeat: pinged once; answered, it stays; unanswered as long again, closed for the link', () => {
  const clock = watch(2)
  const [answers, silent] = clock.subscribers
  // Publish 0 reaches both; publish 1 (due at 1000 ms) reaches neither.
  clock.sweepUntil(1000, (now) => { for (const target of clock.subscribers) deliver(clock, target, 0)(now) })
  clock.sweepUntil(1100)
  assert.deepEqual([answers.ws.pings, silent.ws.pings], [0, 0], 'not yet a heartbeat past due')
  clock.sweepUntil(1150)
  assert.deepEqual([answers.ws.pings, silent.ws.pings], [1, 1])
  // One answers the ping; the other does not.
  clock.sweepUntil(1400, (now) => { if (answers.pingedAt && answers.lastHeardAt <= answers.pingedAt) answers.lastHeardAt = now })
  assert.equal(answers.ws.terminated, false)
  assert.equal(silent.ws.terminated, true)
  assert.equal(silent.closedBy, 'link')
  clock.liveness.closed(silent, 1006)
  assert.deepEqual(clock.liveness.result(clock.now()).closes, { link: 1, server: 0, generator: 0 })
  assert.ok(answers.ws.pings >= 2, 'still overdue: probed again, a heartbeat after its answer')
})

test('deliveries running late lately: a subscriber is not overdue until that much later', () => {
  const clock = watch(2)
  const [late, early] = clock.subscribers
  // Publish 0 reaches both on time; publish 1 reaches one 600 ms late (a busy server), the other on
  // time. The server answers every ping.
  const answer = (now) => { for (const target of clock.subscribers) if (target.pingedAt > target.lastHeardAt) target.lastHeardAt = now }
  clock.sweepUntil(2000, (now) => {
    for (const target of clock.subscribers) deliver(clock, target, 0)(now)
    deliver(clock, late, 1, 600)(now)
    deliver(clock, early, 1, 1)(now)
    answer(now)
  })
  // Nothing had run late before: the late one was probed until its delivery came, the other never.
  const probed = late.ws.pings
  assert.ok(probed >= 1)
  assert.equal(early.ws.pings, 0)
  // Publish 2 is due at 2000 ms; neither gets it: the allowance is the 600 ms lateness seen lately.
  clock.sweepUntil(2650, answer)
  assert.deepEqual([late.ws.pings, early.ws.pings], [probed, 0], 'within 600 ms + a heartbeat of due')
  clock.sweepUntil(2800, answer)
  assert.deepEqual([late.ws.pings, early.ws.pings], [probed + 1, 1])
  assert.equal(late.ws.terminated, false, 'its pings were answered')
})

test('a loop running late judges nobody, counts how long, and starts every clock again once on time', () => {
  const clock = watch(1)
  const [target] = clock.subscribers
  clock.sweepUntil(1000, deliver(clock, target, 0))
  // Publish 1 is due at 1000 ms; the loop stalls 3 s in all, in three stalls.
  for (let i = 0; i < 3; i++) clock.stall(1000)
  assert.equal(target.ws.pings, 0, 'no probe while late')
  assert.equal(target.ws.terminated, false)
  const resumed = clock.now() + clock.liveness.sweepMs
  clock.sweepUntil(resumed) // the first sweep on time resumes, judges nobody
  assert.equal(target.ws.pings, 0)
  assert.ok(clock.liveness.result(clock.now()).suspendedMs >= 3000, JSON.stringify(clock.liveness.result(clock.now())))
  // A heartbeat after resuming, the missing delivery is judged: probed.
  clock.sweepUntil(resumed + HEARTBEAT_MS + clock.liveness.sweepMs)
  assert.equal(target.ws.pings, 1)
})

test('a close judged by a sweep a quarter to a half heartbeat late is the generator\'s; a close frame the server\'s', () => {
  const clock = watch(2)
  const [target, other] = clock.subscribers
  other.ended = true
  clock.sweepUntil(1000, deliver(clock, target, 0))
  clock.sweepUntil(1200) // probed at 1150
  assert.equal(target.ws.pings, 1)
  clock.sweepUntil(1250)
  clock.stall(HEARTBEAT_MS * 0.4) // late, but not late enough to wait: it judges, and the close is its own
  assert.equal(target.ws.terminated, true)
  assert.equal(target.closedBy, 'generator')
  clock.liveness.closed(target, 1006)
  clock.liveness.closed(other, 1008)
  assert.deepEqual(clock.liveness.result(clock.now()).closes, { link: 0, server: 1, generator: 1 })
})

test('with --start-at nothing is due before it; an ended subscriber is never judged', () => {
  const clock = watch(2, { startAt: 3000 })
  const [waiting, ended] = clock.subscribers
  ended.ended = true
  clock.sweepUntil(3100)
  assert.deepEqual([waiting.ws.pings, ended.ws.pings], [0, 0])
  clock.sweepUntil(3150)
  assert.deepEqual([waiting.ws.pings, ended.ws.pings], [1, 0], 'the first publish was due at the start')
})
