// What a change of an order means for the staff, in plain words: which banners to raise (each kind has its own
// sound) and which to take down. Pure: the board (app.js) calls changes() for every order it learns about and hands
// the answer to banners.js.
import * as fmt from './format.js';

// Manual-accept branches: an order waiting for staff's decision. The accept work (branch h22acc) marks such an
// order in its JSON; either of these fields is taken, so the banner follows whichever lands.
export function isAwaiting(o) {
  return Boolean(o && (o.awaiting_acceptance === true || o.forwarding === 'awaiting_acceptance'));
}

// The POS has the order: it was delivered there (and stays "delivered" in the forwarding state after a cancel).
function reachedPos(prev, o) {
  return o.forwarding === 'delivered' || Boolean(o.pos_order_id) || Boolean(prev && prev.forwarding === 'delivered');
}

// The problem banner's words: what to do, not the POS's raw answer (the order's detail has the rest).
function problemText(o) {
  const ref = fmt.reference(o);
  switch (o.problem) {
    case 'rejected': return `POS rejected: ${ref} — open it to see what the POS did not accept and how to fix it`;
    case 'unreachable': return `POS unreachable: ${ref} — the hub keeps trying; check the POS is on and online`;
    case 'auth_failed': return `POS login failed: ${ref} — the POS refused the hub's login; ask your admin to check it`;
    default: return `${fmt.problem(o)}: ${ref}`;
  }
}

function firstName(o) {
  return (o.customer_name || '').trim().split(/\s+/)[0] || '';
}

// `prev`: what the board knew before (undefined for an order not seen); `isNew`: the order was just created;
// `fresh`: what is known about it just happened. Returns { raise: [{kind, text}], clear: [kind] }.
export function changes(prev, o, { isNew = false, fresh = false } = {}) {
  const raise = [];
  const clear = [];
  const ref = fmt.reference(o);
  const changed = (field) => (prev ? prev[field] !== o[field] : fresh);

  if (!prev && isNew) {
    raise.push({ kind: 'new', text: `New order ${ref}` + (o.is_schedule ? ` — scheduled for ${fmt.dateTime(o.schedule_date)}` : '') });
  }
  // A problem that went away (the POS took the order after all) takes its banner with it.
  if (!o.problem) clear.push('problem');
  else if (changed('problem')) raise.push({ kind: 'problem', text: problemText(o) });

  if (isAwaiting(o)) {
    if (!prev || !isAwaiting(prev) || fresh) {
      const by = o.accept_deadline ? ` by ${fmt.time(o.accept_deadline)}` : '';
      raise.push({ kind: 'awaiting', text: `Waiting for acceptance: ${ref} — accept or reject it${by}` });
    }
  } else {
    clear.push('awaiting');
  }
  // Manual accept: nobody decided in time; the hub did not send it (and the platform was told).
  if (o.forwarding === 'timed_out' && changed('forwarding'))
    raise.push({ kind: 'timed_out', text: `Not accepted in time: ${ref} — it was not sent to the POS` });

  if (o.delivery_status === 'cancelled') {
    clear.push('new', 'at_pick_up', 'awaiting');
    if (changed('delivery_status') && reachedPos(prev, o))
      raise.push({ kind: 'cancelled', text: `Cancelled by the platform: stop preparing ${ref} — it is already in the POS` });
  } else if (o.delivery_status === 'at_pick_up') {
    if (changed('delivery_status')) {
      const name = firstName(o);
      raise.push({ kind: 'at_pick_up', text: `Driver at pick-up for ${ref}${name ? ` (${name})` : ''} — hand the order over` });
    }
  } else {
    clear.push('at_pick_up'); // picked up (on the way, delivered) or not yet there
  }
  return { raise, clear: clear.filter((k) => !raise.some((r) => r.kind === k)) };
}
