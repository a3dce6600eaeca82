// The dashboard's JSON API: same-origin requests with the session cookie; every POST carries the CSRF token.

let csrf = '';

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function call(method, path, body) {
  const headers = { Accept: 'application/json' };
  if (method === 'POST') {
    headers['Content-Type'] = 'application/json';
    if (csrf) headers['X-CSRF-Token'] = csrf;
  }
  const res = await fetch('/api/dashboard/' + path, {
    method,
    headers,
    credentials: 'same-origin',
    body: method === 'POST' ? JSON.stringify(body || {}) : undefined,
  });
  let data = null;
  try {
    data = await res.json();
  } catch {
    throw new ApiError(res.status, 'bad_answer', `the hub answered ${res.status}`);
  }
  if (!res.ok) {
    const e = data && data.error ? data.error : {};
    throw new ApiError(res.status, e.code || 'failed', e.message || `the hub answered ${res.status}`);
  }
  return data;
}

export async function session() {
  const data = await call('GET', 'session');
  csrf = data.csrf_token;
  return data.user;
}

export async function login(email, password) {
  const data = await call('POST', 'login', { email, password });
  csrf = data.csrf_token;
  return data.user;
}

export async function logout() {
  await call('POST', 'logout');
  csrf = '';
}

export function orders(branch, filter, since) {
  const q = new URLSearchParams({ branch, filter });
  if (since) q.set('since', since);
  return call('GET', 'orders?' + q.toString()).then((d) => d.orders);
}

// The branch's POS connection: { id, pos_unreachable_since, orders_waiting } (both null while it is reachable).
export function branch(id) {
  return call('GET', 'branches?' + new URLSearchParams({ branch: id }).toString()).then((d) => d.branches[0]);
}

export function order(id) {
  return call('GET', 'orders/' + encodeURIComponent(id)).then((d) => d.order);
}

export function revealPhone(id) {
  return call('POST', 'orders/' + encodeURIComponent(id) + '/phone').then((d) => d.phone);
}

export function resend(id) {
  return call('POST', 'orders/' + encodeURIComponent(id) + '/resend');
}

// A manual-accept branch's held order: accept sends it to the POS as ACCEPTED; reject (with a reason) never sends it.
export function accept(id) {
  return call('POST', 'orders/' + encodeURIComponent(id) + '/accept');
}

export function reject(id, reason) {
  return call('POST', 'orders/' + encodeURIComponent(id) + '/reject', { reason });
}

// The event stream of a branch. EventSource reconnects by itself and sends Last-Event-ID; when it gives up (the
// hub answered an error, e.g. during a restart) a new one resumes from the last id seen.
export function follow(branch, { onEvent, onState, onSessionEnded }) {
  let source = null;
  let lastId = null;
  let stopped = false;
  let retry = null;
  const open = () => {
    const q = new URLSearchParams({ branch });
    if (lastId !== null) q.set('last_event_id', lastId);
    source = new EventSource('/api/dashboard/events?' + q.toString());
    onState('connecting');
    source.onopen = () => onState('live');
    source.addEventListener('order', (m) => {
      if (m.lastEventId) lastId = m.lastEventId;
      onEvent(JSON.parse(m.data));
    });
    source.addEventListener('session_ended', () => {
      stop();
      onSessionEnded();
    });
    source.onerror = () => {
      if (stopped) return;
      onState('offline');
      if (source.readyState === EventSource.CLOSED) {
        source.close();
        retry = setTimeout(open, 2000);
      }
    };
  };
  const stop = () => {
    stopped = true;
    clearTimeout(retry);
    if (source) source.close();
  };
  open();
  return { stop, reopened: () => lastId };
}
