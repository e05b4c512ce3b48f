// Precise pacing's budget on explicit times and a thread clock the test sets: what it spends never
// runs ahead of what accrued, the wait shrinks before wake-ups thin out, wake-ups the budget cannot
// pay for per message come a tick apart, and a wake-up's cost is measured from the thread's CPU.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { PacingBudget, TICK_MS } from '../../lib/load/budget.js'

/** A budget whose thread costs `wakeMs` of CPU per post, as the kernel would report it. */
function budgetOf (share, windowMs, wakeMs, tickMs = TICK_MS) {
  const thread = { ms: 0 }
  const budget = new PacingBudget(share, windowMs, () => thread.ms, tickMs)
  budget.accrue(0)
  return { budget, post: () => { thread.ms += wakeMs; budget.woke() } }
}

/**
 * Paces `rate` messages a second for `seconds` as ThreadPacer does: a turn that sends when the
 * budget says (postAt), posted by the thread or, when that time has come already, at once; the rest
 * of the lead waited, every message due by then sent; then the loop busy for `busyMs` (replies read).
 * @returns {{wakes: number, turns: number, spentMs: number, waitedMs: number, lagsMs: number[], endMs: number}}
 *   wakes: the thread's posts; turns: every turn that sent; spentMs: what the budget was charged (the
 *   posts and the waiting);
 *   endMs: when the last message went
 */
function pace (share, windowMs, wakeMs, rate, seconds, busyMs = 0, tickMs = TICK_MS) {
  const { budget, post } = budgetOf(share, windowMs, wakeMs, tickMs)
  const interval = 1000 / rate
  let now = 0
  let next = 0
  let wakes = 0
  let turns = 0
  let spentMs = 0
  let waitedMs = 0
  const lagsMs = []
  while (next * interval < seconds * 1000) {
    const due = next * interval
    budget.accrue(now)
    const postAt = budget.postAt(due, now)
    turns++
    if (postAt > now) {
      now = postAt
      spentMs += budget.wakeMs
      post()
      wakes++
    }
    if (now < due) {
      budget.waited(due - now)
      waitedMs += due - now
      now = due
    }
    budget.sent(now)
    while (next * interval <= now && next * interval < seconds * 1000) lagsMs.push(now - next++ * interval)
    now += busyMs
  }
  return { wakes, turns, spentMs: spentMs + waitedMs, waitedMs, lagsMs, endMs: now }
}

test('at a low rate every message has its own wake-up and waits out the window on time', () => {
  const { wakes, spentMs, lagsMs } = pace(0.1, 0.1, 0.04, 200, 2)
  assert.equal(wakes, 399, 'the first message is due at once')
  assert.ok(lagsMs.every((lag) => lag === 0), 'the thread posts a window early and the wait ends at the due time')
  assert.ok(spentMs <= 0.1 * 2000 + 0.2, `${spentMs} ms within 10% of a core`)
})

test('whatever the rate, pacing spends no more than its share of a core, and wake-ups thin out to what it pays for', () => {
  for (const rate of [1000, 5000, 20_000, 100_000]) {
    const { wakes, turns, spentMs, lagsMs, endMs } = pace(0.1, 0.1, 0.04, rate, 2)
    // What accrued until the last send, plus what it starts with (one window and one wake-up); each
    // post is charged twice the thread's cost, for the loop it wakes.
    assert.ok(spentMs <= 0.1 * endMs + 0.2 + 1e-9, `${rate}/s: spent ${spentMs} ms in ${endMs} ms`)
    assert.ok(wakes <= (0.1 * endMs + 0.2) / 0.08 + 1, `${rate}/s: ${wakes} wake-ups`)
    // A turn of the loop's own sends only what the lead or a tick lets through.
    assert.ok(turns <= wakes + endMs / TICK_MS + 1, `${rate}/s: ${turns} turns`)
    assert.equal(lagsMs.length, rate * 2, 'every message is sent')
  }
})

test('once the budget cannot pay for a wake-up per message, messages go in groups a tick apart, none waiting', () => {
  for (const rate of [20_000, 100_000]) {
    const { wakes, waitedMs, lagsMs, endMs } = pace(0.1, 0.1, 0.04, rate, 2)
    // 0.08 ms a wake-up (the thread's and the loop's) at 10% of a core would pay for 1,250 a
    // second: a tick apart, there are 1,000.
    // (A few more at the start, paid by the window it starts with.)
    assert.ok(wakes <= endMs / TICK_MS + 10, `${rate}/s: ${wakes} wake-ups in ${endMs} ms`)
    assert.ok(wakes >= endMs / TICK_MS - 2, `${rate}/s: still a wake-up each tick: ${wakes} in ${endMs} ms`)
    // No waiting in turns: what it waited in 2 s is what it started with (one window and one wake-up).
    assert.ok(waitedMs <= 0.2, `${rate}/s: waited ${waitedMs} ms`)
    const latest = lagsMs.reduce((most, lag) => Math.max(most, lag), 0)
    assert.ok(latest <= TICK_MS + 1e-9, `${rate}/s: late by at most a tick: ${latest} ms`)
  }
  // A tick's wake-up comes whatever the budget has left, as a timer's would: at 5% of a core, which
  // pays for 625 a second, still one a tick, and never two.
  const thin = pace(0.05, 0.1, 0.04, 20_000, 2)
  assert.ok(Math.abs(thin.wakes - thin.endMs / TICK_MS) <= 2, `${thin.wakes} wake-ups in ${thin.endMs} ms`)
  assert.ok(thin.lagsMs.every((lag) => lag <= TICK_MS + 1e-9))
  // Where the budget pays for every message's wake-up, the tick does not hold any back.
  const { wakes, lagsMs } = pace(0.5, 0.1, 0.04, 2000, 1)
  assert.equal(wakes, 1999, 'a wake-up per message at 2,000/s on half a core')
  assert.ok(lagsMs.every((lag) => lag === 0))
})

test('a shorter tick groups the messages a shorter time apart, each late by at most that tick', () => {
  // An objective of p50<1ms takes a 0.2 ms tick (lib/capacity/judge.js): at 50,000/s, 5,000 wake-ups a second.
  const { wakes, lagsMs, endMs } = pace(0.1, 0.1, 0.04, 50_000, 2, 0, 0.2)
  assert.ok(Math.abs(wakes - endMs / 0.2) <= 10, `${wakes} wake-ups in ${endMs} ms`)
  const latest = lagsMs.reduce((most, lag) => Math.max(most, lag), 0)
  assert.ok(latest <= 0.2 + 1e-9 && latest > 0.15, `late by at most the tick: ${latest} ms`)
  assert.equal(lagsMs.length, 100_000, 'every message is sent')
})

test('a loop busy between its turns, its next message due already each time, still sends in groups a tick apart', () => {
  // A generator near its limit: a fifth of a millisecond of replies between turns, at 50,000/s.
  const { turns, endMs, lagsMs } = pace(0.1, 0.1, 0.04, 50_000, 2, 0.2)
  assert.ok(turns <= endMs / TICK_MS + 10, `${turns} turns in ${endMs} ms: each paid for, or a tick after the last turn that sent`)
  assert.equal(lagsMs.length, 100_000, 'every message is sent')
})

test('the wait before a due time is what remains after paying for the wake-up, never more than the window', () => {
  const { budget, post } = budgetOf(0.1, 0.1, 0.04)
  assert.equal(budget.lead(), 0.1, 'it starts with one window and one wake-up')
  post(0) // 0.1 ms: the estimate, until measured
  budget.waited(0.1)
  budget.accrue(1.5) // +0.15 ms
  assert.ok(Math.abs(budget.lead() - 0.05) < 1e-9, `0.15 accrued, less a wake-up: ${budget.lead()}`)
  assert.ok(Math.abs(budget.affordableAt(1.5) - 1.5) < 1e-9, 'a wake-up is paid for now')
  budget.waited(0.1)
  assert.ok(Math.abs(budget.affordableAt(1.5) - 2) < 1e-9, `short by 0.05 ms at 10% of a core: in 0.5 ms, ${budget.affordableAt(1.5)}`)
  budget.accrue(100)
  assert.equal(budget.lead(), 0.1, 'a long idle stretch saves no more than one window')
})

test('a wake-up costs the thread\'s CPU per post and the loop\'s as much again, measured every 100 ms; unknown, the estimate stays', () => {
  const { budget, post } = budgetOf(0.1, 0.1, 0.03)
  budget.accrue(1) // the first reading, at 0, was taken at start
  for (let i = 0; i < 10; i++) post()
  budget.accrue(101)
  assert.ok(Math.abs(budget.wakeMs - 0.06) < 1e-9, `${budget.wakeMs} ms per wake-up`)
  const blind = new PacingBudget(0.1, 0.1, () => null)
  blind.accrue(0)
  blind.woke()
  blind.accrue(200)
  assert.equal(blind.wakeMs, 0.1, 'no reading: the estimate as measured here')
})
