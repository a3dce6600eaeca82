// The merchant board: log in, pick a branch, watch its orders arrive and change live, notice POS problems,
// send an order to the POS again, and accept or reject the orders a manual-accept branch holds.
import * as api from './api.js';
import * as fmt from './format.js';

const $ = (id) => document.getElementById(id);
const state = {
  user: null, branch: '', filter: 'today', orders: new Map(), selected: '', stream: null, synced: false,
  phones: new Map(), // order id -> phone opened by the user (kept across re-renders)
};

// ---- small DOM helpers (text only: nothing from the hub is ever parsed as HTML) ----
function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}
const badge = ({ label, tone }, extra = '') => el('span', { class: `badge tone-${tone} ${extra}`, text: label });

// ---- sound: a short chime made with Web Audio (no file to fetch); browsers allow it after a user gesture ----
let audio = null;
function unlockAudio() {
  if (!audio && window.AudioContext) audio = new AudioContext();
  if (audio && audio.state === 'suspended') audio.resume();
}
function chime(urgent) {
  document.body.dataset.chimes = String(Number(document.body.dataset.chimes || 0) + 1);
  if (!audio) return;
  const notes = urgent ? [880, 660, 880, 660] : [660, 990];
  notes.forEach((f, i) => {
    const o = audio.createOscillator();
    const g = audio.createGain();
    o.frequency.value = f;
    o.type = urgent ? 'square' : 'sine';
    const t = audio.currentTime + i * 0.18;
    g.gain.setValueAtTime(0.0001, t);
    g.gain.exponentialRampToValueAtTime(0.4, t + 0.02);
    g.gain.exponentialRampToValueAtTime(0.0001, t + 0.16);
    o.connect(g).connect(audio.destination);
    o.start(t);
    o.stop(t + 0.17);
  });
}
document.addEventListener('pointerdown', unlockAudio);
document.addEventListener('keydown', unlockAudio);

// ---- banners ----
// Problem banners stay until dismissed; the others go after a minute. At most four at a time, newest first.
const MAX_BANNERS = 4;
function banner(kind, text, orderId, { sound = true } = {}) {
  const box = $('banners');
  const b = el('div', { class: `banner ${kind}`, role: 'alert', 'data-order-id': orderId || '' },
    el('span', { class: 'text', text: text.length > 200 ? text.slice(0, 197) + '…' : text }),
    el('span', { class: 'buttons' },
      orderId ? el('button', { type: 'button', text: 'Open', onclick: () => { b.remove(); select(orderId); } }) : null,
      el('button', { type: 'button', text: 'Dismiss', onclick: () => b.remove() })));
  box.prepend(b);
  while (box.children.length > MAX_BANNERS) {
    const quiet = [...box.children].reverse().find((x) => !x.classList.contains('problem')) || box.lastElementChild;
    quiet.remove();
  }
  if (kind !== 'problem') setTimeout(() => b.remove(), 60_000);
  if (sound) chime(kind === 'problem');
}

// ---- the branch's POS connection ----
// While the hub cannot reach the branch's POS (its circuit breaker is open) a banner says since when and how many
// orders wait; it goes when the POS is reachable again. Asked every 15 s, and soon after an event while it shows.
const POS_POLL_MS = 15_000;
let posTimer = null;
let posSoon = null;
let posRound = 0; // answers of an older round (another branch, a stopped board) are dropped
function showPos(b) {
  const box = $('pos-banner');
  const down = Boolean(b && b.pos_unreachable_since);
  const text = down ? fmt.posUnreachable(b.pos_unreachable_since, b.orders_waiting) : '';
  if (down && box.hidden) chime(true);
  box.hidden = !down;
  if (box.textContent !== text) box.textContent = text; // unchanged text is not announced again
}
function stopPos() {
  posRound++;
  clearTimeout(posTimer);
  clearTimeout(posSoon);
  posSoon = null;
  showPos(null);
}
async function refreshPos() {
  clearTimeout(posTimer);
  clearTimeout(posSoon);
  posSoon = null;
  const round = ++posRound;
  if (!state.user || !state.branch) return;
  try {
    const b = await api.branch(state.branch);
    if (round === posRound) showPos(b);
  } catch (e) {
    // Otherwise keep what is shown: the stream's state already says when the hub is away.
    if (e.status === 401 && round === posRound) return showLogin('Your session ended; log in again.');
  }
  if (round === posRound) posTimer = setTimeout(refreshPos, POS_POLL_MS);
}

// ---- filters ----
function matches(o) {
  switch (state.filter) {
    case 'active': return o.delivery_status !== 'delivered' && o.delivery_status !== 'cancelled';
    case 'problems': return o.problem !== '';
    case 'today': {
      const start = new Date(fmt.startOfToday()).getTime();
      const end = start + 86400000;
      const inDay = (iso) => iso && new Date(iso).getTime() >= start && new Date(iso).getTime() < end;
      return inDay(o.created_at) || inDay(o.schedule_date);
    }
    default: return true;
  }
}

// ---- acceptance (manual-accept branches) ----
const waiting = (o) => o.forwarding === 'awaiting_acceptance';

// The hub says how many seconds are left when it sends a summary; the countdown runs on from when it arrived, so
// a browser clock that is off does not matter.
function keep(o) {
  o.deadlineMs = o.accept_seconds_left === null || o.accept_seconds_left === undefined
    ? null : Date.now() + o.accept_seconds_left * 1000;
  state.orders.set(o.id, o);
}

function countdown(o) {
  return el('span', { class: 'countdown', 'data-deadline': String(o.deadlineMs), text: fmt.countdown(o.deadlineMs - Date.now()) });
}

setInterval(() => {
  for (const c of document.querySelectorAll('.countdown')) c.textContent = fmt.countdown(Number(c.dataset.deadline) - Date.now());
}, 1000);

function decideButtons(o) {
  const stop = (f) => (e) => { e.stopPropagation(); f(); };
  return el('div', { class: 'decide' },
    el('button', { type: 'button', class: 'accept', text: 'Accept', onclick: stop(() => acceptOrder(o)) }),
    el('button', { type: 'button', class: 'reject', text: 'Reject', onclick: stop(() => confirmReject(o)) }));
}

async function acceptOrder(o) {
  try {
    await api.accept(o.id);
    banner('new', `${fmt.reference(o)} accepted: sent to the POS`, o.id, { sound: false });
  } catch (e) {
    handleError(e);
  }
}

function confirmReject(o) {
  const dlg = $('reject-dialog');
  $('reject-text').textContent = `Reject ${fmt.reference(o)}? It is never sent to the POS.`;
  $('reject-detail').value = '';
  dlg.onclose = async () => {
    if (dlg.returnValue !== 'ok') return;
    const detail = $('reject-detail').value.trim();
    const reason = $('reject-reason').value + (detail ? `: ${detail}` : '');
    try {
      await api.reject(o.id, reason);
      banner('new', `${fmt.reference(o)} rejected`, o.id, { sound: false });
    } catch (e) {
      handleError(e);
    }
  };
  dlg.returnValue = '';
  dlg.showModal();
}

// ---- rendering ----
function card(o) {
  const scheduled = o.is_schedule
    ? el('div', { class: 'schedule', text: `Scheduled for ${fmt.dateTime(o.schedule_date)}` }) : null;
  const li = el('li', {
    class: `order tone-${fmt.tone(o)}${waiting(o) ? ' waiting' : ''}`, 'data-order-id': o.id, 'data-external-id': o.external_id,
    'data-delivery-status': o.delivery_status, 'data-forwarding': o.forwarding, 'data-test': String(!!o.test),
    tabindex: '0',
    'aria-current': String(o.id === state.selected),
    onclick: () => select(o.id),
    onkeydown: (e) => { if (e.key === 'Enter') select(o.id); },
  },
  el('div', { class: 'line1' },
    el('span', { class: 'ref', text: fmt.reference(o) }),
    el('span', { class: 'meta', text: `${fmt.time(o.created_at)} · ${o.order_type} · ${o.total}` })),
  el('div', { class: 'line2' },
    badge(fmt.delivery(o.delivery_status), 'delivery'), ' ', badge(fmt.forwarding(o), 'forwarding'),
    o.test ? ' ' : null, o.test ? badge({ label: 'TEST', tone: 'warn' }, 'test') : null),
  scheduled,
  el('div', { class: 'meta', text: `${o.item_count} item(s)${o.customer_name ? ' · ' + o.customer_name : ''}` }),
  waiting(o) ? countdown(o) : null,
  waiting(o) ? decideButtons(o) : null);
  return li;
}

function renderList() {
  const list = $('orders');
  // Orders waiting for acceptance first (the soonest deadline on top), then the newest.
  const shown = [...state.orders.values()].filter(matches).sort((a, b) => {
    if (waiting(a) !== waiting(b)) return waiting(a) ? -1 : 1;
    if (waiting(a)) return a.deadlineMs - b.deadlineMs;
    return a.id < b.id ? 1 : -1;
  });
  list.replaceChildren(...shown.map(card));
  $('empty').hidden = shown.length > 0;
}

function row(cells, head = false) {
  return el('tr', {}, ...cells.map((c, i) => el(head ? 'th' : 'td', {
    text: c === null || c === undefined ? '' : String(c), class: i === cells.length - 1 ? 'wrap' : 'nowrap',
  })));
}

function table(headers, rows) {
  return el('div', { class: 'scroll' },
    el('table', {}, el('thead', {}, row(headers, true)), el('tbody', {}, ...rows.map((r) => row(r)))));
}

const RESENDABLE = new Set(['rejected', 'dead', 'auth_failed', 'delivered']);

function renderDetail(o) {
  const d = $('detail');
  d.hidden = false;
  d.dataset.orderId = o.id;
  const parts = [
    el('h2', { text: fmt.reference(o) }),
    el('p', {}, badge(fmt.delivery(o.delivery_status), 'delivery'), ' ', badge(fmt.forwarding(o), 'forwarding'),
      o.test ? ' ' : null, o.test ? badge({ label: 'TEST', tone: 'warn' }, 'test') : null),
  ];
  if (o.problem && o.last_error) parts.push(el('p', { class: 'error', text: `POS said: ${o.last_error}` }));
  if (waiting(o)) {
    keep(o);
    parts.push(el('p', {}, countdown(o)), decideButtons(o));
  }
  parts.push(el('p', { text: `Hub order ${o.id} · ${o.order_type} · paid by ${o.payment_method}` }));
  parts.push(o.is_schedule
    ? el('p', { class: 'schedule', text: `Scheduled for ${fmt.dateTime(o.schedule_date)}` + (o.due_at ? ` (sent to the POS at ${fmt.time(o.due_at)})` : '') })
    : el('p', { text: `Placed at ${fmt.dateTime(o.created_at)}` }));
  if (o.note) parts.push(el('p', { text: `Note: ${o.note}` }));

  parts.push(el('h3', { text: 'Customer' }));
  if (o.customer) {
    const opened = state.phones.get(o.id);
    const phone = el('span', { class: 'phone', text: opened || o.customer.phone });
    const show = o.customer.phone_masked && !opened ? el('button', {
      type: 'button', text: 'Show phone', class: 'show-phone',
      onclick: async () => {
        try {
          const full = await api.revealPhone(o.id);
          state.phones.set(o.id, full);
          phone.textContent = full;
          show.remove();
        } catch (e) {
          handleError(e);
        }
      },
    }) : null;
    parts.push(el('p', {}, `${o.customer.name} · `, phone, ' ', show));
    if (o.customer.address) parts.push(el('p', { text: o.customer.address }));
  } else {
    parts.push(el('p', { text: 'No customer data' }));
  }
  if (o.car_data) {
    parts.push(el('h3', { text: 'Car' }));
    const c = o.car_data;
    parts.push(el('p', { class: 'car', text: `${c.color} ${c.car_brand} · plate ${c.plate_letters} ${c.plate_number}` }));
  }

  parts.push(el('h3', { text: 'Items' }));
  parts.push(el('ul', {}, ...o.items.map((it) => el('li', {},
    `${it.quantity} × ${it.id} (${it.price})${it.note ? ' — ' + it.note : ''}`,
    it.options.length ? el('ul', {}, ...it.options.map((op) => el('li', { text: `+ ${op.quantity} × ${op.id} (${op.price})` }))) : null))));
  parts.push(el('p', { text: `Subtotal ${o.subtotal} · tax ${o.tax} · discount ${o.discount} · total ${o.total}` }));

  parts.push(el('h3', { text: 'Status timeline' }));
  parts.push(table(['time', 'status', 'from', 'applied', 'by / detail'],
    o.timeline.map((s) => [fmt.clock(s.event_time), s.status, s.source, s.applied ? 'yes' : 'no',
      [s.actor, s.detail].filter(Boolean).join(' · ')])));
  parts.push(el('h3', { text: 'POS delivery attempts' }));
  parts.push(o.attempts.length
    ? table(['#', 'time', 'HTTP', 'outcome', 'ms', 'error'],
      o.attempts.map((a) => [a.attempt, fmt.clock(a.attempted_at), a.http_status ?? '—', a.outcome, a.latency_ms, a.error || '']))
    : el('p', { text: 'Not sent yet' }));

  const actions = el('div', { class: 'actions' });
  if (RESENDABLE.has(o.forwarding) && o.delivery_status !== 'cancelled')
    actions.append(el('button', { type: 'button', class: 'primary resend', text: 'Send to POS again', onclick: () => confirmResend(o) }));
  actions.append(el('button', { type: 'button', text: 'Close', onclick: () => { state.selected = ''; d.hidden = true; renderList(); } }));
  parts.push(actions);
  d.replaceChildren(...parts);
}

async function select(id) {
  state.selected = id;
  renderList();
  try {
    renderDetail(await api.order(id));
  } catch (e) {
    handleError(e);
  }
}

function confirmResend(o) {
  const dlg = $('confirm');
  $('confirm-text').textContent = `Send ${fmt.reference(o)} to the POS again? It is now: ${fmt.forwarding(o).label}.`;
  dlg.onclose = async () => {
    if (dlg.returnValue !== 'ok') return;
    try {
      await api.resend(o.id);
      banner('new', `${fmt.reference(o)} queued for the POS again`, o.id, { sound: false });
      await select(o.id);
    } catch (e) {
      handleError(e);
    }
  };
  dlg.returnValue = '';
  dlg.showModal();
}

// ---- live updates ----
// Banners for what changed: an order not seen before (from an event, or from a list reload after a
// reconnection), and an order whose POS problem is new.
// `isNew`: the order was just created; `fresh`: what is known about it just happened (an event, or a reload
// after a reconnection of an order created in the last minutes).
function notice(prev, o, isNew, fresh) {
  if (!prev && isNew) {
    banner(waiting(o) ? 'new waiting' : 'new', `New order ${fmt.reference(o)}` + (waiting(o) ? ' — accept or reject it' : '') + (o.is_schedule ? ` — scheduled for ${fmt.dateTime(o.schedule_date)}` : ''), o.id);
  }
  // Decided, timed out or cancelled: the call to decide goes.
  if (prev && waiting(prev) && !waiting(o)) {
    for (const b of document.querySelectorAll('.banner.waiting')) if (b.dataset.orderId === o.id) b.remove();
  }
  // A problem that went away (the POS took the order after all) takes its banner with it.
  if (prev && prev.problem && !o.problem) {
    for (const b of document.querySelectorAll('.banner.problem')) if (b.dataset.orderId === o.id) b.remove();
  }
  if (o.problem && (prev ? prev.problem !== o.problem : fresh)) {
    banner('problem', `${fmt.problem(o)}: ${fmt.reference(o)}${o.last_error ? ' — ' + o.last_error : ''}`, o.id);
  }
}

function onEvent(ev) {
  const o = ev.order;
  if (o.branch_id !== state.branch) return;
  const prev = state.orders.get(o.id);
  keep(o);
  notice(prev, o, ev.kind === 'status' && ev.detail === 'received', true);
  renderList();
  // Orders come and go while the POS is away: the count follows within a few seconds.
  if (!$('pos-banner').hidden && !posSoon) posSoon = setTimeout(refreshPos, 2000);
  if (state.selected === o.id) select(o.id);
}

function setLive(s) {
  const live = $('live');
  live.dataset.state = s;
  live.textContent = { live: 'Live', connecting: 'Connecting…', offline: 'Offline — reconnecting' }[s];
  // After a (re)connection the list and the POS state are reloaded, so nothing missed while away stays missing.
  if (s === 'live') {
    loadList();
    refreshPos();
  }
}

async function loadList() {
  try {
    const branch = state.branch;
    const list = await api.orders(branch, state.filter, fmt.startOfToday());
    if (branch !== state.branch) return;
    const recent = Date.now() - 10 * 60_000;
    for (const o of list) {
      const prev = state.orders.get(o.id);
      keep(o);
      // After the first load, a recent order we had not seen arrived while the stream was away.
      if (state.synced && new Date(o.created_at).getTime() > recent) notice(prev, o, !prev, true);
    }
    state.synced = true;
    renderList();
  } catch (e) {
    handleError(e);
  }
}

function follow() {
  if (state.stream) state.stream.stop();
  stopPos();
  state.stream = api.follow(state.branch, { onEvent, onState: setLive, onSessionEnded: () => showLogin('Your session ended; log in again.') });
}

function handleError(e) {
  if (e.status === 401) showLogin('Your session ended; log in again.');
  else banner('problem', e.message || String(e), '', { sound: false });
}

// ---- views ----
function showLogin(message = '') {
  if (state.stream) state.stream.stop();
  state.stream = null;
  stopPos();
  state.user = null;
  state.orders.clear();
  state.phones.clear();
  state.synced = false;
  $('who').hidden = true;
  $('board-view').hidden = true;
  $('login-view').hidden = false;
  $('login-error').textContent = message;
  $('email').focus();
}

function showBoard(user) {
  state.user = user;
  $('login-view').hidden = true;
  $('board-view').hidden = false;
  $('who').hidden = false;
  const select = $('branch');
  select.replaceChildren(...user.branches.map((b) => el('option', { value: b.id, text: b.name && b.name !== b.id ? `${b.name} (${b.id})` : b.id })));
  const saved = localStorage.getItem('orderhub.branch');
  state.branch = user.branches.some((b) => b.id === saved) ? saved : (user.branches[0] || {}).id || '';
  select.value = state.branch;
  if (!state.branch) {
    $('empty').hidden = false;
    $('empty').textContent = 'This user has no branch to show.';
    return;
  }
  follow();
}

$('branch').addEventListener('change', (e) => {
  state.branch = e.target.value;
  localStorage.setItem('orderhub.branch', state.branch);
  state.orders.clear();
  state.synced = false;
  state.selected = '';
  $('detail').hidden = true;
  renderList();
  follow();
});

for (const b of document.querySelectorAll('[data-filter]')) {
  b.addEventListener('click', () => {
    state.filter = b.dataset.filter;
    for (const x of document.querySelectorAll('[data-filter]')) x.setAttribute('aria-pressed', String(x === b));
    loadList();
  });
}

$('login-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  unlockAudio();
  $('login-error').textContent = '';
  try {
    showBoard(await api.login($('email').value, $('password').value));
    $('password').value = '';
  } catch (err) {
    $('login-error').textContent = err.status === 401 ? 'E-mail or password does not match.' : err.message;
  }
});

$('logout').addEventListener('click', async () => {
  try { await api.logout(); } catch { /* the session is gone either way */ }
  showLogin('Logged out.');
});

api.session().then(showBoard, () => showLogin());
