// The operator console (/console/) in a real browser: Debian's chromium, driven by Playwright.
// Run by src/test/browser/run, which starts a redis-server of its own (these tests stop and start
// it) and the packaged service with authentication on and three keys: admin and worker of one
// tenant, and the admin key of a tenant that has nothing. Each scenario sets its lcids up through
// the API, as services would, then looks at them in the page, and checks actions through the API
// again. Every page's network log is checked for a 404 and its console for a blocked script.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { spawn } from 'node:child_process';
import { chromium } from 'playwright-core';

const BATON = process.env.BATON_URL;
const ADMIN = process.env.ADMIN_KEY;
const WORKER = process.env.WORKER_KEY;
const EMPTY = process.env.EMPTY_KEY;
const MAX_ATTEMPTS = Number(process.env.MAX_ATTEMPTS || 3);
const SCREENSHOT = process.env.SCREENSHOT || '';
const REDIS_PORT = Number(process.env.REDIS_PORT);
const WAIT = { timeout: 15_000 };

let browser;
let redisStopped = false;

before(async () => {
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM, args: ['--no-sandbox'] });
});

after(async () => {
  if (redisStopped) await startRedis();
  await browser?.close();
});

// --- the API, as services use it ---------------------------------------------------------------

async function call(method, path, body, key = ADMIN) {
  const response = await fetch(BATON + path, {
    method,
    headers: { Authorization: 'Bearer ' + key, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

const unique = (prefix) => prefix + '-' + Date.now().toString(36) + Math.random().toString(36).slice(2, 7);

async function acquire(lcid, requestId, payload) {
  const answer = await call('POST', `/v1/locks/${encodeURIComponent(lcid)}/acquire`,
    payload === undefined ? { requestId } : { requestId, payload });
  assert.ok(answer.status === 200 || answer.status === 202, `acquire ${requestId}: ${answer.status}`);
  return answer.body;
}

/** Aborts `requestId` with requeue until it has used its attempts: it ends DEAD, a dead letter. */
async function kill(lcid, requestId, payload, reason) {
  let token = (await acquire(lcid, requestId, payload)).token;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const aborted = await call('POST', `/v1/locks/${lcid}/abort`, { requestId, token, requeue: true, reason });
    assert.equal(aborted.status, 200);
    if (attempt < MAX_ATTEMPTS) {
      const rescue = await acquire(lcid, 'rescuer-' + attempt);
      assert.equal(rescue.request.requestId, requestId);
      token = rescue.token;
    }
  }
  assert.equal((await call('GET', `/v1/locks/${lcid}/requests/${requestId}`)).body.state, 'DEAD');
}

// --- this run's Redis ----------------------------------------------------------------------------

/** One inline command; the reply's first line, or '' when the server closed without one. */
function redis(command) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(REDIS_PORT, '127.0.0.1');
    let reply = '';
    socket.on('connect', () => socket.write(command + '\r\n'));
    socket.on('data', (data) => {
      reply += data;
      if (reply.includes('\r\n')) socket.end();
    });
    socket.on('close', () => resolve(reply.split('\r\n')[0]));
    socket.on('error', reject);
  });
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** SHUTDOWN SAVE: the data is written to disk and read again on start, as after a restart. */
async function stopRedis() {
  redisStopped = true;
  await redis('SHUTDOWN SAVE');
  for (let i = 0; i < 100; i++) {
    try {
      await redis('PING');
    } catch (e) {
      return; // refused: it is down
    }
    await pause(100);
  }
  assert.fail('redis-server did not stop');
}

async function startRedis() {
  await new Promise((resolve, reject) => {
    const server = spawn(process.env.REDIS_SERVER, [process.env.REDIS_CONF], { stdio: 'inherit' });
    server.on('error', reject);
    server.on('exit', (code) => (code === 0 ? resolve() : reject(new Error('redis-server exited ' + code))));
  });
  for (let i = 0; i < 100; i++) {
    try {
      if ((await redis('PING')) === '+PONG') {
        redisStopped = false;
        return;
      }
    } catch (e) {
      // not listening yet
    }
    await pause(100);
  }
  assert.fail('redis-server did not start');
}

// --- the page ------------------------------------------------------------------------------------

/**
 * A page at /console/ (plus `hash`) with the key typed in, unless `key` is null. Every request
 * URL is collected, and every 404 (including those the browser makes on its own, such as a
 * favicon's, which reach the log only as console messages) and every Content-Security-Policy
 * report: `done()` asserts there were none.
 */
async function openConsole(key, { hash = '', width = 1280 } = {}) {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  const page = await context.newPage();
  const urls = [];
  const problems = [];
  page.on('request', (request) => urls.push(request.url()));
  page.on('response', (response) => {
    if (response.status() === 404) problems.push('404 ' + response.url());
  });
  page.on('console', (message) => {
    const text = message.text();
    if (/status of 404/.test(text)) problems.push('404 ' + message.location().url);
    if (/Content Security Policy/i.test(text)) problems.push(text);
  });
  await page.goto(BATON + '/console/' + hash);
  if (key !== null) {
    await page.fill('#key', key);
    await page.click('#open');
  }
  const done = async () => {
    try {
      assert.deepEqual(problems, [], 'the page\'s network log and console');
    } finally {
      await context.close();
    }
  };
  return { page, context, urls, done };
}

/** Waits for the next refresh: the status line names the time of each. */
async function nextRefresh(page) {
  const before = await page.locator('#status').textContent();
  await page.waitForFunction((text) => document.getElementById('status').textContent !== text, before, WAIT);
}

const busyRow = (page, lcid) => page.locator(`#busy tbody tr[data-lcid="${lcid}"]`);
const storedKey = (page) => page.evaluate(() => sessionStorage.getItem('baton.console.key'));

// --- scenarios -----------------------------------------------------------------------------------

test('an lcid with a holder and three queued requests is listed busy, and its queue in order', async () => {
  const lcid = unique('order');
  await acquire(lcid, 'holder');
  await acquire(lcid, 'pay', { amount: 42 });
  await acquire(lcid, 'ship', { carrier: 'dhl', parcels: 2 });
  await acquire(lcid, 'invoice');
  // What the screenshot shows besides: another holder, an lcid left with no holder, dead letters.
  const other = unique('stock');
  await acquire(other, 'reserve-7f3a');
  await kill(unique('order'), 'refund-5', { amount: 17 }, 'payment service down');
  const { page, done } = await openConsole(ADMIN);
  try {
    const row = busyRow(page, lcid);
    await row.waitFor(WAIT);
    assert.equal(await row.locator('td').nth(1).textContent(), 'holder');
    assert.equal(await row.locator('td').nth(5).textContent(), '3');
    // The count is of the rows shown; the index's hint is only named when it differs.
    const [rows, count] = await page.evaluate(() => [
      document.querySelectorAll('#busy tbody tr.pick').length, document.getElementById('busy-count').textContent]);
    assert.match(count, new RegExp('^' + rows + ' shown( \\(the index lists about \\d+\\))?$'));

    await row.click();
    await page.locator('#queue tbody tr').nth(2).waitFor(WAIT);
    assert.equal(await page.locator('#detail-lcid').textContent(), lcid);
    assert.equal(new URL(page.url()).hash, '#lcid=' + lcid);
    const ids = await page.locator('#queue tbody tr').evaluateAll((trs) => trs.map((r) => r.dataset.requestId));
    assert.deepEqual(ids, ['pay', 'ship', 'invoice']);
    assert.equal(await page.locator('#queue tbody tr').first().locator('td.payload').textContent(), '{"amount":42}');
    assert.equal(await page.locator('#queue-length').textContent(), '(3 queued)');
    if (SCREENSHOT) {
      await page.locator(`#dead tbody tr[data-request-id="refund-5"]`).waitFor(WAIT);
      await nextRefresh(page);
      await page.screenshot({ path: SCREENSHOT, fullPage: true });
    }
  } finally {
    await done();
  }
});

test('the busy count is the rows shown; the index\'s hint is labelled as such when it differs', async () => {
  const lcid = unique('order');
  await acquire(lcid, 'holder');
  const { page, context, done } = await openConsole(null);
  try {
    // The index's hint cannot be made to disagree on demand: the answer is changed on its way.
    await context.route((url) => url.pathname === '/v1/busy-locks', async (route) => {
      const response = await route.fetch();
      const json = await response.json();
      if (Array.isArray(json.items)) json.busyCount = json.items.length + 3;
      await route.fulfill({ response, json });
    });
    await page.fill('#key', ADMIN);
    await page.click('#open');
    await busyRow(page, lcid).waitFor(WAIT);
    const [rows, count] = await page.evaluate(() => [
      document.querySelectorAll('#busy tbody tr.pick').length, document.getElementById('busy-count').textContent]);
    assert.equal(count, `${rows} shown (the index lists about ${rows + 3})`);
  } finally {
    await done();
  }
});

test('a request killed after max attempts is in the dead letters, its lcid opens, and Retry\'s confirmation stays', async () => {
  const lcid = unique('order');
  await kill(lcid, 'poison', { sku: 'A1' }, 'stock service down');

  const { page, done } = await openConsole(ADMIN);
  try {
    const row = page.locator(`#dead tbody tr[data-lcid="${lcid}"][data-request-id="poison"]`);
    await row.waitFor(WAIT);
    assert.equal(await row.locator('td').nth(2).textContent(), String(MAX_ATTEMPTS));
    assert.equal(await row.locator('td').nth(3).textContent(), 'stock service down');
    assert.equal(await row.locator('td.payload').textContent(), '{"sku":"A1"}');

    // The lcid is a link to its detail, as a busy row is.
    await row.locator('td a').click();
    await page.locator('#detail-lcid').filter({ hasText: lcid }).waitFor(WAIT);
    assert.equal(new URL(page.url()).hash, '#lcid=' + lcid);
    await page.locator('#queue-length').filter({ hasText: /^\(\d+ queued\)$/ }).waitFor(WAIT);
    assert.equal(await page.locator('#lock dd').first().textContent(), 'no'); // it died under the lock

    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      dialog.accept();
    });
    await row.locator('button.retry').click();
    await row.waitFor({ state: 'detached', ...WAIT });
    assert.match(asked, /poison/);
    const view = await call('GET', `/v1/locks/${lcid}/requests/poison`);
    assert.equal(view.body.state, 'QUEUED');
    assert.equal(view.body.attempt, 1);

    // The confirmation outlives the refreshes, until it is dismissed.
    const confirmation = page.locator('#notices li')
      .filter({ hasText: `poison of ${lcid} is queued again, at position ${view.body.position}.` });
    await confirmation.waitFor(WAIT);
    await nextRefresh(page);
    await nextRefresh(page);
    assert.equal(await confirmation.isVisible(), true);
    await confirmation.locator('button.dismiss').click();
    assert.equal(await confirmation.count(), 0);
  } finally {
    await done();
  }
});

test('a payload with markup is shown as text and runs nothing', async () => {
  const lcid = unique('order');
  const hostile = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';
  await acquire(lcid, 'holder');
  await acquire(lcid, 'note', hostile);
  const { page, done } = await openConsole(ADMIN);
  try {
    await page.fill('#lookup-lcid', lcid);
    await page.click('#lookup button');
    const payload = page.locator('#queue tbody tr[data-request-id="note"] td.payload');
    await payload.waitFor(WAIT);
    assert.equal(await payload.textContent(), JSON.stringify(hostile));
    assert.equal(await page.locator('#queue img, #queue script').count(), 0);
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
  } finally {
    await done();
  }
});

test('a wrong key is refused with a clear message, and a stored key that is refused is forgotten', async () => {
  const { page, done } = await openConsole('not-a-key-of-this-service');
  try {
    await page.locator('#login-error').filter({ hasText: 'refused' }).waitFor(WAIT);
    assert.match(await page.locator('#login-error').textContent(), /refused \(401 Unauthorized\)/);
    assert.equal(await page.locator('#app').isHidden(), true);
    assert.equal(await storedKey(page), null);

    // A key that Baton no longer accepts (revoked, or mistyped while Baton could not check it):
    // the first 401 forgets it.
    await page.evaluate(() => {
      sessionStorage.setItem('baton.console.key', 'revoked-key');
      sessionStorage.setItem('baton.console.role', 'admin');
    });
    await page.reload();
    await page.locator('#login-error').filter({ hasText: 'refused (401 Unauthorized)' }).waitFor(WAIT);
    assert.equal(await page.locator('#login').isVisible(), true);
    assert.equal(await page.evaluate(() => sessionStorage.length), 0);
  } finally {
    await done();
  }
});

test('a worker key sees locks but no operator actions, and the admin API refuses it anyway', async () => {
  const lcid = unique('order');
  await acquire(lcid, 'holder');
  const { page, done } = await openConsole(WORKER);
  try {
    await page.locator('#who').filter({ hasText: 'worker key' }).waitFor(WAIT);
    await page.fill('#lookup-lcid', lcid);
    await page.click('#lookup button');
    await page.locator('#lock dd').first().filter({ hasText: 'yes' }).waitFor(WAIT);
    assert.equal(await page.locator('#dead-section').isHidden(), true);
    assert.equal(await page.locator('#busy-section').isHidden(), true);
    assert.equal(await page.locator('button.retry').count(), 0);
  } finally {
    await done();
  }
  assert.equal((await call('GET', '/v1/dead-letters', undefined, WORKER)).status, 403);
  assert.equal((await call('POST', `/v1/locks/${lcid}/requests/holder/retry`, undefined, WORKER)).status, 403);
  assert.equal((await call('GET', `/v1/locks/${lcid}/queue`, undefined, WORKER)).status, 403);
});

test('the key is in no URL and no local storage, only in this tab\'s session storage', async () => {
  const lcid = unique('order');
  await acquire(lcid, 'holder');
  const { page, urls, done } = await openConsole(ADMIN, { hash: '#lcid=' + lcid });
  try {
    await page.locator('#who').filter({ hasText: 'admin key' }).waitFor(WAIT);
    await page.locator('#detail-lcid').filter({ hasText: lcid }).waitFor(WAIT);
    await nextRefresh(page);
    assert.ok(urls.length > 3, 'the page called the API');
    assert.equal(urls.filter((url) => url.includes(ADMIN)).length, 0);
    assert.equal(page.url().includes(ADMIN), false);
    assert.equal(await page.evaluate(() => localStorage.length), 0);
    assert.equal(await storedKey(page), ADMIN);

    await page.click('#forget');
    assert.equal(await page.evaluate(() => sessionStorage.length), 0);
    assert.equal(await page.locator('#login').isVisible(), true);
  } finally {
    await done();
  }
});

test('Redis down: the key is kept, the views are marked stale and say what failed, also after a reload, and come back live', async () => {
  const lcid = unique('order');
  await acquire(lcid, 'holder');
  await acquire(lcid, 'pay', { amount: 42 });
  await acquire(lcid, 'ship');
  const { page, done } = await openConsole(ADMIN, { hash: '#lcid=' + lcid });
  try {
    await busyRow(page, lcid).waitFor(WAIT);
    await page.locator('#queue tbody tr[data-request-id="ship"]').waitFor(WAIT);
    await page.locator('#status').filter({ hasText: /^Updated / }).waitFor(WAIT);

    await stopRedis();
    const banner = page.locator('#banner');
    await banner.filter({ hasText: 'Not live since' }).waitFor(WAIT);
    const text = await banner.textContent();
    assert.match(text, /Baton answered 503 .*\(BACKEND_UNAVAILABLE\): the lock store is unavailable/);
    assert.match(text, /the last good update, at /);
    // The rows stay, dimmed, each section with the time it was last read.
    for (const section of ['#busy-section', '#dead-section', '#detail']) {
      await page.locator(section + '.stale').waitFor(WAIT);
      assert.match(await page.locator(section + ' .stale-note').textContent(), /^not live: as of /);
    }
    assert.equal(await busyRow(page, lcid).count(), 1);
    assert.match(await page.locator('#status').textContent(), /^Last good update /);
    assert.equal(await storedKey(page), ADMIN);

    const since = /^Not live since (.+?)\. /.exec(text)[1];

    // A reload during the outage: still the key, the app (not the key form), the stale views,
    // and the time the outage began.
    await page.reload();
    await banner.filter({ hasText: 'Not live since ' + since + '. ' }).waitFor(WAIT);
    assert.equal(await page.locator('#login').isHidden(), true);
    assert.equal(await page.locator('#who').textContent(), 'admin key');
    assert.equal(await storedKey(page), ADMIN);
    await page.locator('#busy-section.stale').waitFor(WAIT);
    assert.equal(await busyRow(page, lcid).count(), 1);
    assert.equal(await page.locator('#detail-lcid').textContent(), lcid);
    assert.equal(await page.locator('#detail.stale #queue tbody tr[data-request-id="ship"]').count(), 1);
    assert.match(await banner.textContent(), /the last good update, at /);
    assert.match(await page.locator('#busy-section .stale-note').textContent(), /^not live: as of /);
    // A dead letter cannot be retried from a stale list (the first scenario left one).
    assert.ok(await page.locator('#dead button.retry').count() > 0);
    assert.equal(await page.locator('#dead button.retry:enabled').count(), 0);

    // A key typed during the outage: a wrong one is refused at once (keys need no Redis), a
    // right one is kept, not yet checked, and checked when Redis is back.
    const wrong = await openConsole('not-a-key-of-this-service');
    try {
      await wrong.page.locator('#login-error').filter({ hasText: 'refused (401 Unauthorized)' }).waitFor(WAIT);
    } finally {
      await wrong.done();
    }
    const typed = await openConsole(ADMIN);
    try {
      await typed.page.locator('#banner').filter({ hasText: 'Baton answered 503' }).waitFor(WAIT);
      assert.equal(await typed.page.locator('#who').textContent(), 'key not checked yet');
      assert.equal(await storedKey(typed.page), ADMIN);

      // Redis back: live again by itself, nothing to type.
      await startRedis();
      await typed.page.locator('#who').filter({ hasText: 'admin key' }).waitFor(WAIT);
      await busyRow(typed.page, lcid).waitFor(WAIT);
      await typed.page.locator('#banner').waitFor({ state: 'hidden', ...WAIT });
    } finally {
      await typed.done();
    }
    await banner.waitFor({ state: 'hidden', ...WAIT });
    await page.locator('#status').filter({ hasText: /^Updated / }).waitFor(WAIT);
    assert.equal(await page.locator('.stale').count(), 0);
    assert.equal(await busyRow(page, lcid).count(), 1);
    assert.equal(await page.locator('#dead button.retry:disabled').count(), 0);
    assert.equal(await storedKey(page), ADMIN);
  } finally {
    if (redisStopped) await startRedis();
    await done();
  }
});

test('no answer and 5xx from a proxy: the key is kept, the views marked stale, and live again after', async () => {
  const lcid = unique('order');
  await acquire(lcid, 'holder');
  await acquire(lcid, 'pay');
  const { page, context, done } = await openConsole(ADMIN);
  try {
    await busyRow(page, lcid).waitFor(WAIT);
    await page.locator('#status').filter({ hasText: /^Updated / }).waitFor(WAIT);
    const banner = page.locator('#banner');

    await context.route('**/v1/**', (route) => route.abort('connectionrefused'));
    await banner.filter({ hasText: 'Baton cannot be reached' }).waitFor(WAIT);
    await page.locator('#busy-section.stale').waitFor(WAIT);
    await page.reload();
    await banner.filter({ hasText: 'Baton cannot be reached' }).waitFor(WAIT);
    assert.equal(await page.locator('#login').isHidden(), true);
    assert.equal(await busyRow(page, lcid).count(), 1);
    assert.equal(await storedKey(page), ADMIN);

    await context.unroute('**/v1/**');
    await context.route('**/v1/**', (route) => route.fulfill({
      status: 502, contentType: 'text/html', body: '<html><body>502 Bad Gateway</body></html>' }));
    await banner.filter({ hasText: 'Baton answered 502' }).waitFor(WAIT);
    assert.equal(await storedKey(page), ADMIN);
    assert.equal(await page.locator('#busy-section.stale').count(), 1);

    await context.unroute('**/v1/**');
    await banner.waitFor({ state: 'hidden', ...WAIT });
    await page.locator('#status').filter({ hasText: /^Updated / }).waitFor(WAIT);
    assert.equal(await page.locator('.stale').count(), 0);
  } finally {
    await done();
  }
});

test('an invalid lcid is said where it was typed, and the detail of the last lcid is closed', async () => {
  const lcid = unique('order');
  await acquire(lcid, 'holder');
  const { page, done } = await openConsole(ADMIN);
  try {
    await page.fill('#lookup-lcid', lcid);
    await page.click('#lookup button');
    await page.locator('#detail-lcid').filter({ hasText: lcid }).waitFor(WAIT);

    await page.fill('#lookup-lcid', 'bad lcid!');
    await page.click('#lookup button');
    const error = page.locator('#lookup-error');
    await error.filter({ hasText: 'is not an lcid' }).waitFor(WAIT);
    assert.equal(await error.textContent(), '\u201cbad lcid!\u201d is not an lcid (lcid must be 1 to 200 of A-Z a-z 0-9 . _ : @ -)');
    assert.equal(await page.locator('#lookup-lcid').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.locator('#detail').isHidden(), true);
    await nextRefresh(page);
    assert.equal(await page.locator('#detail').isHidden(), true);
    assert.doesNotMatch(await page.locator('#status').textContent(), /lcid/);
    assert.equal(await page.locator('#banner').isHidden(), true);

    await page.fill('#lookup-lcid', lcid);
    await page.click('#lookup button');
    await page.locator('#detail-lcid').filter({ hasText: lcid }).waitFor(WAIT);
    assert.equal(await error.textContent(), '');
    assert.equal(await page.locator('#lookup-lcid').getAttribute('aria-invalid'), null);
  } finally {
    await done();
  }
});

test('empty tables say so: no busy lcids, no dead letters, nothing queued', async () => {
  const { page, done } = await openConsole(EMPTY);
  try {
    await page.locator('#busy tbody tr.empty').filter({ hasText: 'No busy lcids' }).waitFor(WAIT);
    await page.locator('#dead tbody tr.empty').filter({ hasText: 'No dead letters.' }).waitFor(WAIT);
    assert.equal(await page.locator('#busy tbody tr').count(), 1);
    assert.equal(await page.locator('#dead tbody tr').count(), 1);
    assert.equal(await page.locator('#busy-count').textContent(), '');
    await page.fill('#lookup-lcid', 'nobody-used-this');
    await page.click('#lookup button');
    await page.locator('#queue tbody tr.empty').filter({ hasText: 'Nothing queued.' }).waitFor(WAIT);
    assert.equal(await page.locator('#lock dd').first().textContent(), 'no');
    assert.equal(await page.locator('#queue-length').textContent(), '(0 queued)');
  } finally {
    await done();
  }
});

test('a deep link #lcid=... opens the lcid, opening one updates it, and back and forward move between them', async () => {
  const first = unique('tenant:eu@order');
  const second = unique('order');
  await acquire(first, 'holder-1');
  await acquire(second, 'holder-2');
  const { page, done } = await openConsole(ADMIN, { hash: '#lcid=' + encodeURIComponent(first) });
  const shows = (lcid) => page.locator('#detail-lcid').filter({ hasText: new RegExp('^' + lcid + '$') }).waitFor(WAIT);
  try {
    await shows(first);
    await page.locator('#lock dd').nth(1).filter({ hasText: 'holder-1' }).waitFor(WAIT);
    assert.equal(await page.locator('#lookup-lcid').inputValue(), first);

    await busyRow(page, second).locator('td').nth(2).click();
    await shows(second);
    assert.equal(new URL(page.url()).hash, '#lcid=' + second);

    await page.goBack();
    await shows(first);
    await page.locator('#lock dd').nth(1).filter({ hasText: 'holder-1' }).waitFor(WAIT);
    await page.goForward();
    await shows(second);
    await page.locator('#lock dd').nth(1).filter({ hasText: 'holder-2' }).waitFor(WAIT);

    await page.click('#close-detail');
    assert.equal(await page.locator('#detail').isHidden(), true);
    assert.equal(new URL(page.url()).hash, '');
    await page.goBack();
    await shows(second);

    // Opened on load when the key is already in the tab.
    await page.goto(BATON + '/console/#lcid=' + encodeURIComponent(first));
    await page.reload();
    await shows(first);
    await page.locator('#lock dd').nth(1).filter({ hasText: 'holder-1' }).waitFor(WAIT);
  } finally {
    await done();
  }
});

test('long ids wrap at their separators, never inside a word', async () => {
  const lcid = unique('warehouse-eu-west-1.inventory.reservations:customer@example.com:order');
  const holder = 'reservation_2024-12-07_checkout-service-7d9f8c6b5-x2k4q';
  await acquire(lcid, holder);
  await acquire(lcid, 'note', { note: 'the warehouse management service answered slowly', items: ['A1', 'B2'] });
  const { page, done } = await openConsole(ADMIN, { hash: '#lcid=' + encodeURIComponent(lcid), width: 700 });
  try {
    await busyRow(page, lcid).waitFor(WAIT);
    await page.locator('#queue tbody tr[data-request-id="note"]').waitFor(WAIT);
    // Each piece between two line-break opportunities is laid out on one line; the long ones did wrap.
    const pieces = (selector) => page.locator(selector).evaluate((element) => {
      const lines = [];
      const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const words = node.textContent.split(/(?<= )/);
        let offset = 0;
        for (const word of words) {
          const range = document.createRange();
          range.setStart(node, offset);
          range.setEnd(node, offset + word.trimEnd().length);
          offset += word.length;
          const tops = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
          lines.push({ word, lines: tops.size, top: Math.round(range.getBoundingClientRect().top) });
        }
      }
      return lines;
    });
    for (const selector of [`#busy tbody tr[data-lcid="${lcid}"] td:nth-child(1)`,
      `#busy tbody tr[data-lcid="${lcid}"] td:nth-child(2)`, '#queue tbody tr[data-request-id="note"] td.payload']) {
      const laid = await pieces(selector);
      assert.deepEqual(laid.filter((piece) => piece.lines !== 1), [], selector + ': a piece split across lines');
      assert.ok(new Set(laid.map((piece) => piece.top)).size > 1, selector + ' wraps at all');
    }
  } finally {
    await done();
  }
});

test('the favicon is served and linked: no request of the page is answered 404', async () => {
  const { page, done } = await openConsole(ADMIN);
  try {
    await page.locator('#who').filter({ hasText: 'admin key' }).waitFor(WAIT);
    const href = await page.locator('link[rel="icon"]').evaluate((link) => link.href);
    const icon = await page.request.get(href);
    assert.equal(icon.status(), 200);
    assert.match(icon.headers()['content-type'], /^image\/svg\+xml/);
    await nextRefresh(page); // the favicon is fetched after load; done() checks that nothing was 404
  } finally {
    await done();
  }
});
