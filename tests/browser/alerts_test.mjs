// The board's alert rules (hub/web/alerts.js, pure) under Node, without a browser: which banners a change of an
// order raises and takes down, including the hook for orders awaiting acceptance (manual-accept branches), which
// the browser tests cannot produce until the accept work lands. Exits non-zero when a check fails.
import assert from 'node:assert/strict';
import { changes, isAwaiting } from '../../hub/web/alerts.js';
import { columnOf } from '../../hub/web/kitchen.js';

const base = {
  id: 'o1', partner: 'plat', external_id: 'A-17', delivery_status: 'received', forwarding: 'delivered', problem: '',
  is_schedule: false, customer_name: 'Sara Al-Qahtani', created_at: '2026-11-25T10:00:00Z',
};
const with_ = (more) => ({ ...base, ...more });
const kinds = (c) => c.raise.map((r) => r.kind);
let n = 0;
const test = (what, fn) => { fn(); n++; console.log(`ok ${n} - ${what}`); };

test('a new order raises "new" only', () => {
  const c = changes(undefined, base, { isNew: true, fresh: true });
  assert.deepEqual(kinds(c), ['new']);
  assert.equal(c.raise[0].text, 'New order plat #A-17');
});

test('cancelled after the POS had it: stop preparing, and the other messages go', () => {
  const c = changes(base, with_({ delivery_status: 'cancelled' }), { fresh: true });
  assert.deepEqual(kinds(c), ['cancelled']);
  assert.equal(c.raise[0].text, 'Cancelled by the platform: stop preparing plat #A-17 — it is already in the POS');
  for (const k of ['new', 'at_pick_up', 'awaiting']) assert.ok(c.clear.includes(k), k);
});

test('cancelled before the POS had it: no stop-preparing banner', () => {
  const prev = with_({ forwarding: 'pending' });
  assert.deepEqual(kinds(changes(prev, with_({ forwarding: 'cancelled', delivery_status: 'cancelled' }), { fresh: true })), []);
});

test('an update that repeats a known status raises nothing again', () => {
  const cancelled = with_({ delivery_status: 'cancelled' });
  assert.deepEqual(kinds(changes(cancelled, cancelled, { fresh: true })), []);
  const pickup = with_({ delivery_status: 'at_pick_up' });
  assert.deepEqual(kinds(changes(pickup, pickup, { fresh: true })), []);
});

test('driver at pick-up names the order and the first name only; picked up takes it down', () => {
  const c = changes(base, with_({ delivery_status: 'at_pick_up' }), { fresh: true });
  assert.deepEqual(kinds(c), ['at_pick_up']);
  assert.equal(c.raise[0].text, 'Driver at pick-up for plat #A-17 (Sara) — hand the order over');
  assert.ok(changes(with_({ delivery_status: 'at_pick_up' }), with_({ delivery_status: 'on_the_way' })).clear.includes('at_pick_up'));
});

test('a POS rejection says what to do, never the raw answer', () => {
  const c = changes(base, with_({ forwarding: 'rejected', problem: 'rejected', last_error: 'POS answered 422: {"errors":{}}' }), { fresh: true });
  assert.deepEqual(kinds(c), ['problem']);
  assert.ok(!c.raise[0].text.includes('422') && c.raise[0].text.startsWith('POS rejected: plat #A-17 — '));
  assert.ok(changes(with_({ problem: 'rejected' }), base).clear.includes('problem'));
});

test('the awaiting-acceptance hook: either field, repeated while it waits, cleared when it no longer does', () => {
  for (const waiting of [with_({ awaiting_acceptance: true }), with_({ forwarding: 'awaiting_acceptance' })]) {
    assert.ok(isAwaiting(waiting));
    assert.equal(columnOf(waiting), 'waiting');
    assert.deepEqual(kinds(changes(undefined, waiting, { isNew: true, fresh: true })), ['new', 'awaiting']);
    assert.deepEqual(kinds(changes(waiting, waiting, { fresh: true })), ['awaiting']); // again, until someone acts
    assert.ok(changes(waiting, base).clear.includes('awaiting'));
  }
  const c = changes(undefined, with_({ awaiting_acceptance: true, accept_deadline: '2026-11-25T10:10:00Z' }), { fresh: true });
  assert.match(c.raise.find((r) => r.kind === 'awaiting').text, /^Waiting for acceptance: plat #A-17 — accept or reject it by /);
});

test('not accepted in time: a banner once; no ticket in the kitchen', () => {
  const waiting = with_({ forwarding: 'awaiting_acceptance' });
  const late = with_({ forwarding: 'timed_out' });
  const c = changes(waiting, late, { fresh: true });
  assert.deepEqual(kinds(c), ['timed_out']);
  assert.equal(c.raise[0].text, 'Not accepted in time: plat #A-17 — it was not sent to the POS');
  assert.ok(c.clear.includes('awaiting'));
  assert.deepEqual(kinds(changes(late, late, { fresh: true })), []);
  assert.equal(columnOf(late), null);
  assert.equal(columnOf(with_({ forwarding: 'merchant_rejected' })), null);
});

test('kitchen columns: in the POS, driver at pick-up, waiting; gone once picked up or cancelled', () => {
  assert.equal(columnOf(base), 'in_pos');
  assert.equal(columnOf(with_({ delivery_status: 'at_pick_up' })), 'pickup');
  assert.equal(columnOf(with_({ forwarding: 'pending' })), 'waiting');
  assert.equal(columnOf(with_({ forwarding: 'rejected', problem: 'rejected' })), 'waiting');
  for (const s of ['on_the_way', 'delivered', 'cancelled']) assert.equal(columnOf(with_({ delivery_status: s })), null);
});
console.log(`${n} passed`);
