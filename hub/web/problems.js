// A POS rejection in the order's detail: what the POS did not accept and the fix, in plain words (the hub reads the
// POS's answer: pos_problems of GET orders/{id}); the POS's raw answer stays one click away.

export function problemsBlock(o, el) {
  if (!o.problem) return [];
  const raw = o.last_error ? el('details', { class: 'raw' }, el('summary', { text: "The POS's own answer" }),
    el('pre', { text: o.last_error })) : null;
  const problems = o.pos_problems || [];
  if (o.problem !== 'rejected' || problems.length === 0) {
    return [el('div', { class: 'what-to-do' }, el('p', { class: 'error', text: plain(o) }), raw)];
  }
  return [el('div', { class: 'what-to-do' },
    el('p', { class: 'error', text: `The POS did not take this order (${problems.length} problem${problems.length === 1 ? '' : 's'}):` }),
    el('ol', { class: 'pos-problems' }, ...problems.map((p) => el('li', { 'data-kind': p.kind },
      el('div', { class: 'problem-text', text: p.text }),
      p.fix ? el('div', { class: 'fix' }, el('strong', { text: 'Fix: ' }), el('span', {}, ...withCode(p.fix, el))) : null))),
    raw)];
}

// `command` in the hub's words becomes a <code> element (text only: nothing is parsed as HTML).
function withCode(text, el) {
  return text.split('`').map((part, i) => (i % 2 ? el('code', { text: part }) : part));
}

function plain(o) {
  switch (o.problem) {
    case 'rejected': return 'The POS did not take this order. Its answer is below; send the order again once the cause is fixed.';
    case 'unreachable': return 'The POS cannot be reached: the hub keeps trying. Check that the POS is on and online.';
    case 'auth_failed': return "The POS refused the hub's login: ask your admin to check the POS connection (orderhub pos set).";
    default: return o.last_error || '';
  }
}
