// Liveness (lib/load/liveness.js) on a clock of the test's own: sweeps every half heartbeat,
// deliveries at their scheduled times or late, a loop running late, pings answered or not.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Liveness } from '../../lib/load/liveness.js'
import { OpenLoopSchedule, StagedSchedule } from '../../lib/load/schedule.js'

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

// The publisher's schedule in use (lib/load/schedule.js, as the publisher keeps it): its measured
// publishes, stamped as the header stamps them (whole µs), from `originMs` on this test's clock.

/** Measured publish `seq` of `schedule`, started at `originMs`, reaches a subscriber `lateMs` after it was due. */
function deliverMeasured (clock, target, schedule, originMs, seq, lateMs = 1) {
  const dueMs = originMs + schedule.dueAt(seq)
  return (now) => {
    const stampUs = Math.trunc(dueMs * 1000)
    if (now < dueMs + lateMs || target.latestDueUs >= stampUs) return
    target.lastHeardAt = now
    target.latestDueUs = stampUs
    clock.liveness.delivered(lateMs * 1000)
    clock.liveness.measured(seq, stampUs) // as Subscribers does with the first measured delivery
  }
}

/** Every measured publish of `schedule` up to `last` (default: all it plans) to each of `targets`. */
function deliverAll (clock, targets, schedule, originMs, last = schedule.planned - 1) {
  return (now) => {
    for (const target of targets) {
      for (let seq = 0; seq <= last; seq++) deliverMeasured(clock, target, schedule, originMs, seq)(now)
    }
  }
}

test('a ramp (--stages, up from 0, hold, down to 0) with a cut: the cut subscriber is probed a heartbeat after its next publish was due, and closed; the other is never probed, though publishes come further apart than a heartbeat', () => {
  const stages = [{ durationMs: 2000, target: 20 }, { durationMs: 2000, target: 20 }, { durationMs: 2000, target: 0 }]
  const clock = watch(2, { rate: undefined, stages })
  const [kept, cut] = clock.subscribers
  const schedule = new StagedSchedule(stages)
  assert.equal(schedule.planned, 80)
  assert.ok(schedule.dueAt(1) > 4 * HEARTBEAT_MS, 'the ramp starts slow: 447 ms between the first publishes')
  // The cut comes on the way up: publish 10 is the last the cut one gets.
  const nextMs = schedule.dueAt(11)
  const deliveries = (now) => {
    deliverAll(clock, [kept], schedule, 0)(now)
    deliverAll(clock, [cut], schedule, 0, 10)(now)
  }
  clock.sweepUntil(nextMs + HEARTBEAT_MS, deliveries)
  assert.deepEqual([kept.ws.pings, cut.ws.pings], [0, 0], 'not yet a heartbeat past due')
  clock.sweepUntil(nextMs + HEARTBEAT_MS + 1 + clock.liveness.sweepMs, deliveries)
  assert.deepEqual([kept.ws.pings, cut.ws.pings], [0, 1])
  assert.equal(cut.ws.terminated, false)
  // Its ping unanswered for a heartbeat (plus the 1 ms deliveries ran late): closed for the link.
  clock.sweepUntil(cut.pingedAt + HEARTBEAT_MS + 1 + clock.liveness.sweepMs, deliveries)
  assert.equal(cut.ws.terminated, true)
  assert.equal(cut.closedBy, 'link')
  cut.open = false
  // The rest of the ramp, down to 0: the last publish is due 447 ms before its end, and the END
  // (the phase over) by its end; nothing is overdue until a heartbeat after that.
  assert.ok(schedule.durationMs - schedule.dueAt(79) > 4 * HEARTBEAT_MS)
  clock.sweepUntil(schedule.durationMs + HEARTBEAT_MS, deliveries)
  assert.equal(kept.ws.pings, 0, 'every publish came when it was due')
  assert.equal(clock.liveness.pings, 1)
  // No END by then: probed, as a subscriber that missed it.
  clock.sweepUntil(schedule.durationMs + HEARTBEAT_MS + 1 + clock.liveness.sweepMs, deliveries)
  assert.equal(kept.ws.pings, 1)
})

test('--rate with a ramp down to 0, a hold at 0 and back up: nobody is probed while nothing is due; one that missed a publish, once the ramp calls for it again', () => {
  // 20/s down to 0 over 2 s (publishes 0-20, the last at the bottom), 2 s at 0, up to 20/s over 1 s (21-29).
  const stages = [{ durationMs: 2000, target: 0 }, { durationMs: 2000, target: 0 }, { durationMs: 1000, target: 20 }]
  const clock = watch(3, { rate: 20, stages })
  const [first, second, silent] = clock.subscribers
  const schedule = new StagedSchedule(stages, { startRate: 20 })
  assert.equal(schedule.planned, 30)
  assert.ok(Math.abs(schedule.dueAt(20) - 2000) < 1e-6, 'publish 20 at the bottom of the ramp')
  const resumesMs = schedule.dueAt(21)
  assert.ok(resumesMs > 4000, `publish 21 once the ramp is up again: ${resumesMs} ms`)
  // The silent one gets everything down to the bottom, then nothing more.
  const deliveries = (now) => {
    deliverAll(clock, [first, second], schedule, 0)(now)
    deliverAll(clock, [silent], schedule, 0, 20)(now)
  }
  clock.sweepUntil(resumesMs + HEARTBEAT_MS, deliveries)
  assert.deepEqual(clock.subscribers.map((target) => target.ws.pings), [0, 0, 0], 'the tail of the ramp and the hold: nothing was due')
  clock.sweepUntil(resumesMs + HEARTBEAT_MS + 1 + clock.liveness.sweepMs, deliveries)
  assert.deepEqual(clock.subscribers.map((target) => target.ws.pings), [0, 0, 1], 'the silent one missed publish 21')
  for (const target of [first, second]) target.ended = true // their END, once the ramp is over
  clock.sweepUntil(schedule.durationMs + 4 * HEARTBEAT_MS, deliveries)
  assert.deepEqual([first.ws.pings, second.ws.pings], [0, 0])
  assert.equal(silent.ws.terminated, true)
})

test('constant --rate after a warm-up: the measured phase counts from its first delivery; a subscriber with only the warm-up is due its first publish, one cut later its next', () => {
  // Warm-up publishes at 0 and 1000 ms (--rate 1), then the measured phase from 2000 ms: 5 publishes (--duration 5s).
  const clock = watch(3, { durationMs: 5000 })
  const [all, warmedOnly, cut] = clock.subscribers
  const schedule = new OpenLoopSchedule(RATE, { durationMs: 5000 })
  const originMs = 2000
  const deliveries = (now) => {
    for (const target of clock.subscribers) for (const seq of [0, 1]) deliver(clock, target, seq)(now)
    deliverAll(clock, [all], schedule, originMs)(now)
    deliverAll(clock, [cut], schedule, originMs, 1)(now)
  }
  clock.sweepUntil(originMs + clock.liveness.sweepMs, deliveries)
  assert.equal(clock.liveness.originUs, originMs * 1000, 'the first measured delivery says when the phase started')
  // The one with the warm-up only was due publish 0 at 2000 ms; the cut one, publish 2 at 4000 ms.
  clock.sweepUntil(originMs + HEARTBEAT_MS, deliveries)
  assert.deepEqual(clock.subscribers.map((target) => target.ws.pings), [0, 0, 0])
  clock.sweepUntil(originMs + HEARTBEAT_MS + 1 + clock.liveness.sweepMs, deliveries)
  assert.deepEqual(clock.subscribers.map((target) => target.ws.pings), [0, 1, 0])
  clock.sweepUntil(originMs + 2000 + HEARTBEAT_MS, deliveries)
  assert.equal(warmedOnly.ws.terminated, true)
  assert.equal(cut.ws.pings, 0)
  clock.sweepUntil(originMs + 2000 + HEARTBEAT_MS + 1 + clock.liveness.sweepMs, deliveries)
  assert.deepEqual(clock.subscribers.map((target) => target.ws.pings), [0, 1, 1])
  // The last publish at 6000 ms, the END due by the end of --duration (7000 ms): the one with all of them is not probed before.
  clock.sweepUntil(originMs + 5000 + HEARTBEAT_MS, deliveries)
  assert.equal(all.ws.pings, 0)
  assert.equal(cut.ws.terminated, true)
  assert.equal(clock.liveness.pings, 2)
})

test('the schedule in use: a ramp without --rate, a slow rate, no schedule at all; the lateness windows stay finite', () => {
  const ramp = new Liveness({ heartbeatMs: HEARTBEAT_MS, stages: [{ durationMs: 2000, target: 0 }], rate: 20 }, 0)
  assert.ok(ramp.schedule instanceof StagedSchedule)
  // Its mean rate, 10/s: 4 intervals of 100 ms, over sweeps of 50 ms.
  assert.equal(ramp.windows.length, 8)
  const fromZero = new Liveness({ heartbeatMs: HEARTBEAT_MS, stages: [{ durationMs: 1000, target: 0 }, { durationMs: 1000, target: 10 }] }, 0)
  assert.equal(fromZero.warmupIntervalUs, 0, 'no warm-up rate: the first publish is expected at the start')
  assert.ok(Number.isFinite(fromZero.windows.length) && fromZero.windows.length > 0)
  const slow = new Liveness({ heartbeatMs: HEARTBEAT_MS, rate: 1e-6 }, 0)
  assert.equal(slow.windows.length, 10 * 60_000 / slow.sweepMs, 'at most 10 minutes of windows')
  assert.ok(new Liveness({ heartbeatMs: HEARTBEAT_MS, rate: 5, messages: 10 }, 0).schedule instanceof OpenLoopSchedule)
  assert.throws(() => new Liveness({ heartbeatMs: HEARTBEAT_MS }, 0), /--rate or --stages/)
})
