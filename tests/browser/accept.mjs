// Drives the board of a manual-accept branch in Debian's Chromium (headless) through Playwright: run by
// test_manual_accept.py, which starts PostgreSQL-backed orderhub and orderpos. A held order shows a countdown and
// Accept/Reject; Accept sends it, Reject (reason from the list plus free text) does not, and the hub's time-out
// shows on the card. Exits non-zero when a check fails; screenshots go to ORDERHUB_BROWSER_ARTIFACTS.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { chromium } from 'playwright-core';

// How long a live change may take to show before the test calls it lost: it bounds a hang, it is no timing
// promise (a CI machine once took 2.3 s from webhook to card); how soon is tests/load/board-bench.sh's question.
const LIVE_WAIT = 15_000;

const env = process.env;
const ARTIFACTS = env.ORDERHUB_BROWSER_ARTIFACTS;
mkdirSync(ARTIFACTS, { recursive: true });

let failures = 0;
let passes = 0;
function check(cond, what) {
  if (cond) passes++;
  else {
    failures++;
    console.log(`FAIL: ${what}`);
  }
}
const shot = (page, name) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });

// Asks test_manual_accept.py to act (expire ORDER) and waits for its "ok".
const replies = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
async function control(what) {
  console.log(`CONTROL ${what}`);
  const { value } = await replies.next();
  if (value !== 'ok') throw new Error(`control ${what}: ${value}`);
}

async function webhook(id) {
  const body = {
    event: 'order_created', event_time: new Date().toISOString(), branch_id: 'MAN-1',
    payload: {
      id, payment_method: 'card', order_type: 'DELIVERY', note: '', subtotal: 24, tax: 3.6, discount: 0,
      total: 27.6, is_schedule: 0, schedule_date: null, car_data: null,
      customer: { name: 'Sara', phone: '+966500000001', address: null },
      items: [{ id: 'P-BURGER', quantity: 1, price: 24, options: [] }],
    },
  };
  const res = await fetch(env.HUB_URL + env.WEBHOOK_PATH, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  const data = await res.json();
  if (res.status !== 200) throw new Error(`webhook answered ${res.status}: ${JSON.stringify(data)}`);
  return data.order_id;
}

const card = (page, ext) => page.locator(`.order[data-external-id="${ext}"]`);
const forwarding = (page, ext, text) => card(page, ext).locator('.forwarding', { hasText: text }).waitFor({ timeout: 20_000 });

const args = process.getuid && process.getuid() === 0 ? ['--no-sandbox'] : [];
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args });
try {
  const page = await (await browser.newContext({ viewport: { width: 1180, height: 820 } })).newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(env.HUB_URL + '/dashboard/?test=1');  // test mode: the sounds played are listed
  await page.waitForSelector('#login-view:not([hidden])');
  await page.fill('#email', env.BOARD_USER);
  await page.fill('#password', env.BOARD_PASSWORD);
  await page.click('#login-form button[type=submit]');
  await page.waitForSelector('#live[data-state="live"]', { timeout: 10_000 });

  // A held order: on the board with a countdown, Accept and Reject, and a banner that asks for a decision.
  await webhook('M-1');
  await card(page, 'M-1').locator('.countdown').waitFor({ timeout: LIVE_WAIT });
  const left = await card(page, 'M-1').locator('.countdown').textContent();
  check(/^\d+:\d\d left to accept$/.test(left), `the countdown reads "${left}"`);
  check((await card(page, 'M-1').locator('.forwarding').textContent()) === 'WAITING FOR ACCEPT', 'the card says it waits');
  await page.locator('.banner.awaiting', { hasText: 'accept or reject it' }).waitFor({ timeout: LIVE_WAIT });
  // Its own sound, told apart from a new order's by the staff.
  await page.waitForFunction(() => window.__orderhubSounds.some((s) => s.kind === 'awaiting'), null, { timeout: LIVE_WAIT })
    .catch(() => {});
  check(await page.evaluate(() => window.__orderhubSounds.some((s) => s.kind === 'awaiting')),
    'a held order sounds the waiting-for-acceptance sound');
  await webhook('M-2');
  await card(page, 'M-2').locator('.countdown').waitFor({ timeout: LIVE_WAIT });
  const first = await page.locator('.order').first().getAttribute('data-external-id');
  check(first === 'M-1', `the soonest deadline is on top (${first})`);
  await shot(page, 'accept-01-waiting');

  // Accept: sent to the POS.
  await card(page, 'M-1').locator('button.accept').click();
  await forwarding(page, 'M-1', 'In the POS');
  check((await card(page, 'M-1').locator('.countdown').count()) === 0, 'no countdown once accepted');

  // Reject with a reason from the list and free text: never sent.
  await card(page, 'M-2').locator('button.reject').click();
  await page.waitForSelector('#reject-dialog[open]');
  await page.selectOption('#reject-reason', 'Too busy');
  await page.fill('#reject-detail', 'kitchen full');
  await shot(page, 'accept-02-reject-dialog');
  await page.click('#reject-ok');
  await forwarding(page, 'M-2', 'Rejected by the branch');
  await shot(page, 'accept-03-decided');

  // No decision: the hub times it out, and the card says so.
  await webhook('M-3');
  await card(page, 'M-3').locator('.countdown').waitFor({ timeout: LIVE_WAIT });
  await control('expire M-3');
  await forwarding(page, 'M-3', 'NOT ACCEPTED IN TIME');
  check((await card(page, 'M-3').locator('button.accept').count()) === 0, 'no Accept once timed out');
  check((await page.locator('.banner.awaiting').count()) === 0, 'no banner asks for a decision any more');
  await shot(page, 'accept-04-timed-out');
  check(errors.length === 0, `no page errors: ${errors.join(' | ')}`);
} finally {
  await browser.close();
}
console.log(`${passes} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
