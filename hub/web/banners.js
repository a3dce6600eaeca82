// The banners under the header: one per order (its messages merge into it instead of stacking), newest on top,
// each kind with its own colour and sound. Quiet kinds (a new order, the POS back) go after a minute; the others
// stay until dismissed or until what they say is over (the board clears them). An order waiting for acceptance
// cannot be dismissed and sounds again every 20 s until someone acts. The page title counts the banners that need
// attention, plus the POS banner while it shows.
import * as sounds from './sounds.js';

// rank: which kind colours a merged banner (the highest); attention: counted in the title.
const KINDS = {
  new: { rank: 1, attention: false },
  pos_back: { rank: 1, attention: false },
  at_pick_up: { rank: 3, attention: true },
  awaiting: { rank: 4, attention: true, repeatMs: 20_000 },
  problem: { rank: 5, attention: true },
  timed_out: { rank: 5, attention: true },
  cancelled: { rank: 6, attention: true },
};
const MAX_BANNERS = 4;
const QUIET_MS = 60_000;
const MAX_TEXT = 200;

export function createBanners({ box, onOpen, title = document.title }) {
  const entries = new Map(); // key (order id, or a generated one) -> { orderId, messages: Map(kind -> text), el, timers }
  let extra = 0; // attention from outside (the POS banner)
  let seq = 0;

  const info = (kind) => KINDS[kind] || KINDS.problem;
  const needsAttention = (e) => [...e.messages.keys()].some((k) => info(k).attention);

  function updateTitle() {
    const n = [...entries.values()].filter(needsAttention).length + extra;
    document.title = n > 0 ? `(${n}) ${title}` : title;
    document.body.dataset.attention = String(n);
  }

  function drop(key) {
    const e = entries.get(key);
    if (!e) return;
    for (const t of e.timers.values()) clearTimeout(t);
    clearInterval(e.repeat);
    e.el.remove();
    entries.delete(key);
  }

  function render(key) {
    const e = entries.get(key);
    const kinds = [...e.messages.keys()].sort((a, b) => info(b).rank - info(a).rank);
    const top = kinds[0];
    const buttons = [];
    if (e.orderId && onOpen) buttons.push(button('Open', () => { drop(key); updateTitle(); onOpen(e.orderId); }));
    if (!e.messages.has('awaiting')) buttons.push(button('Dismiss', () => { drop(key); updateTitle(); }));
    const texts = kinds.map((k) => {
      const s = document.createElement('span');
      s.className = 'text';
      s.dataset.kind = k;
      const t = e.messages.get(k);
      s.textContent = t.length > MAX_TEXT ? t.slice(0, MAX_TEXT - 3) + '…' : t;
      return s;
    });
    const lines = document.createElement('span');
    lines.className = 'lines';
    lines.append(...texts);
    const actions = document.createElement('span');
    actions.className = 'buttons';
    actions.append(...buttons);
    e.el.className = `banner ${kinds.join(' ')}`;
    e.el.dataset.kind = top;
    e.el.replaceChildren(lines, actions);
    // Repeat the sound of a waiting order until it no longer waits.
    if (e.messages.has('awaiting') && !e.repeat) e.repeat = setInterval(() => sounds.play('awaiting'), info('awaiting').repeatMs);
    if (!e.messages.has('awaiting') && e.repeat) { clearInterval(e.repeat); e.repeat = null; }
  }

  function button(text, onclick) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = text;
    b.addEventListener('click', onclick);
    return b;
  }

  // Raises (or updates) the banner of `orderId` with a message of `kind`; it moves to the top.
  function raise(kind, text, orderId = '', { sound = true } = {}) {
    const key = orderId || `_${++seq}`;
    let e = entries.get(key);
    if (e) {
      entries.delete(key); // newest last, as the page shows them newest first
      entries.set(key, e);
    } else {
      const el = document.createElement('div');
      el.setAttribute('role', 'alert');
      el.dataset.orderId = orderId;
      e = { orderId, messages: new Map(), el, timers: new Map(), repeat: null };
      entries.set(key, e);
    }
    e.messages.set(kind, text);
    clearTimeout(e.timers.get(kind));
    e.timers.delete(kind);
    if (!info(kind).attention) e.timers.set(kind, setTimeout(() => clear(orderId || key, kind), QUIET_MS));
    render(key);
    box.prepend(e.el);
    while (entries.size > MAX_BANNERS) {
      const all = [...entries.entries()];
      const quiet = all.find(([, x]) => !needsAttention(x)) || all[0]; // oldest first in insertion order
      drop(quiet[0]);
    }
    updateTitle();
    if (sound) sounds.play(kind);
  }

  // Takes the `kind` messages of `orderId`'s banner down (every message when kind is omitted).
  function clear(orderId, kind) {
    const e = entries.get(orderId);
    if (!e) return;
    if (kind === undefined) e.messages.clear();
    else {
      e.messages.delete(kind);
      clearTimeout(e.timers.get(kind));
      e.timers.delete(kind);
    }
    if (e.messages.size === 0) drop(orderId);
    else render(orderId);
    updateTitle();
  }

  function clearAll() {
    for (const key of [...entries.keys()]) drop(key);
    updateTitle();
  }

  function setExtraAttention(n) {
    extra = n;
    updateTitle();
  }

  return { raise, clear, clearAll, setExtraAttention };
}
