// The kitchen view: the same board laid out for a wall screen (?view=kitchen, or the header's toggle). Large tickets
// of the active orders in columns by state: waiting (for acceptance, or not in the POS yet), in the POS, driver at
// pick-up. Items, options and notes are readable from a distance; the only personal data is the customer's first
// name. The tickets' items come from GET orders/{id}, fetched again when the order's summary changes.
import * as fmt from './format.js';
import { isAwaiting } from './alerts.js';

const COLUMNS = [
  ['waiting', 'Waiting'],
  ['in_pos', 'In the POS'],
  ['pickup', 'Driver at pick-up'],
];
const DONE = new Set(['delivered', 'cancelled', 'on_the_way']);
// Never sent, and not to be cooked: cancelled before it was sent, or (manual accept) rejected by the branch or not
// accepted in time.
const NOT_SENT = new Set(['cancelled', 'merchant_rejected', 'timed_out']);

export function columnOf(o) {
  if (DONE.has(o.delivery_status) || NOT_SENT.has(o.forwarding)) return null;
  if (o.delivery_status === 'at_pick_up') return 'pickup';
  if (!isAwaiting(o) && o.forwarding === 'delivered') return 'in_pos';
  return 'waiting';
}

export function createKitchen({ root, el, load, onOpen }) {
  const details = new Map(); // order id -> { key, order } (key: what of the summary makes a new fetch worth it)
  let last = [];

  const keyOf = (o) => `${o.delivery_status}|${o.forwarding}|${o.item_count}`;

  function ticket(o) {
    const d = details.get(o.id);
    const full = d ? d.order : null;
    const first = (o.customer_name || '').trim().split(/\s+/)[0];
    const state = isAwaiting(o) ? ['Waiting for acceptance', 'warn']
      : o.problem ? [fmt.problem(o), 'bad'] : [fmt.forwarding(o).label, fmt.forwarding(o).tone];
    const items = full ? el('ul', { class: 'k-items' }, ...full.items.map((it) => el('li', {},
      el('span', { class: 'k-qty', text: `${it.quantity} ×` }), ' ', el('span', { class: 'k-item', text: it.id }),
      it.options.length ? el('ul', { class: 'k-options' }, ...it.options.map((op) => el('li', { text: `+ ${op.quantity > 1 ? op.quantity + ' × ' : ''}${op.id}` }))) : null,
      it.note ? el('div', { class: 'k-note', text: `Note: ${it.note}` }) : null)))
      : el('p', { class: 'k-items', text: `${o.item_count} item(s)…` });
    return el('li', {
      class: `ticket k-tone-${isAwaiting(o) ? 'warn' : fmt.tone(o)}`, 'data-order-id': o.id, 'data-external-id': o.external_id,
      tabindex: '0', onclick: () => onOpen(o.id),
    },
    el('div', { class: 'k-head' },
      el('span', { class: 'k-ref', text: `#${o.external_id}` }),
      el('span', { class: 'k-time', text: fmt.time(o.created_at) })),
    el('div', { class: 'k-meta', text: [o.partner, o.order_type, first].filter(Boolean).join(' · ') }),
    el('span', { class: `badge tone-${state[1]}`, text: state[0] }),
    o.is_schedule ? el('div', { class: 'schedule', text: `Scheduled for ${fmt.dateTime(o.schedule_date)}` }) : null,
    items,
    full && full.note ? el('div', { class: 'k-note', text: `Order note: ${full.note}` }) : null);
  }

  function paint() {
    const by = new Map(COLUMNS.map(([k]) => [k, []]));
    for (const o of last) {
      const c = columnOf(o);
      if (c) by.get(c).push(o);
    }
    root.replaceChildren(...COLUMNS.map(([k, title]) => {
      const list = by.get(k).sort((a, b) => (a.created_at < b.created_at ? -1 : 1)); // oldest first: cook in order
      return el('section', { class: 'k-column', 'data-column': k },
        el('h2', {}, `${title} `, el('span', { class: 'k-count', text: String(list.length) })),
        el('ol', { class: 'k-tickets' }, ...list.map(ticket)));
    }));
  }

  // Shows `orders` (the board's summaries); fetches the details of tickets that are new or changed.
  function render(orders) {
    last = orders;
    paint();
    for (const o of orders) {
      if (!columnOf(o)) continue;
      const key = keyOf(o);
      const d = details.get(o.id);
      if (d && d.key === key) continue;
      details.set(o.id, { key, order: d ? d.order : null });
      load(o.id).then((order) => {
        const cur = details.get(o.id);
        if (cur && cur.key === key) {
          cur.order = order;
          paint();
        }
      }, () => details.delete(o.id));
    }
  }

  function reset() {
    details.clear();
    last = [];
    root.replaceChildren();
  }

  return { render, reset };
}
