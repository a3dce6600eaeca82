// Words and tones for what the board shows. Every state has a text label; the tone (colour) only repeats it.

const DELIVERY = {
  received: ['Received', 'info'],
  assigned: ['Driver assigned', 'info'],
  at_pick_up: ['Driver at pick-up', 'warn'],
  on_the_way: ['On the way', 'warn'],
  delivered: ['Delivered', 'ok'],
  cancelled: ['Cancelled', 'done'],
};

const FORWARDING = {
  pending: ['Waiting to send to POS', 'info'],
  in_flight: ['Sending to POS', 'info'],
  delivered: ['In the POS', 'ok'],
  rejected: ['POS REJECTED', 'bad'],
  auth_failed: ['POS LOGIN FAILED', 'bad'],
  dead: ['POS UNREACHABLE', 'bad'],
  cancelled: ['Not sent (cancelled)', 'done'],
  awaiting_acceptance: ['WAITING FOR ACCEPT', 'warn'],
  merchant_rejected: ['Rejected by the branch (not sent)', 'done'],
  timed_out: ['NOT ACCEPTED IN TIME (not sent)', 'bad'],
};

const PROBLEM = {
  rejected: 'POS rejected',
  unreachable: 'POS unreachable',
  auth_failed: 'POS login failed',
};

export function delivery(status) {
  const [label, tone] = DELIVERY[status] || [status, 'info'];
  return { label, tone };
}

export function forwarding(order) {
  if (order.problem === 'unreachable' && order.forwarding !== 'dead')
    return { label: `POS UNREACHABLE, retrying (attempt ${order.attempts})`, tone: 'bad' };
  const [label, tone] = FORWARDING[order.forwarding] || [order.forwarding || 'No job', 'info'];
  return { label, tone };
}

export function problem(order) {
  return PROBLEM[order.problem] || '';
}

// The card's overall tone: a POS problem first, then the delivery status.
export function tone(order) {
  if (order.problem) return 'bad';
  return delivery(order.delivery_status).tone;
}

export function time(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

// Time of day with seconds; the date too when it is not today.
export function clock(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  const t = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  return d.toDateString() === new Date().toDateString() ? t : `${d.toLocaleDateString()} ${t}`;
}

export function dateTime(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return d.toLocaleString([], { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' });
}

// "POS unreachable since 14:02, 12 orders waiting" (the date too when it is not today), in the browser's time.
export function posUnreachable(since, waiting) {
  const when = new Date(since).toDateString() === new Date().toDateString() ? time(since) : dateTime(since);
  return `POS unreachable since ${when}, ${waiting} order${waiting === 1 ? '' : 's'} waiting`;
}

export function reference(order) {
  return `${order.partner} #${order.external_id}`;
}

// Local midnight as an ISO time with the browser's offset, for the "today" filter.
export function startOfToday(now = new Date()) {
  const d = new Date(now.getFullYear(), now.getMonth(), now.getDate());
  const off = -d.getTimezoneOffset();
  const sign = off >= 0 ? '+' : '-';
  const pad = (n) => String(Math.floor(Math.abs(n))).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T00:00:00${sign}${pad(off / 60)}:${pad(off % 60)}`;
}

// What is left of the time to accept an order: "4:05 left to accept", or that the time is up.
export function countdown(msLeft) {
  if (msLeft <= 0) return 'Time to accept is up';
  const s = Math.ceil(msLeft / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')} left to accept`;
}
