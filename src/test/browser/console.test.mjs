// The operator console (/console/) in a real browser: Debian's chromium, driven by Playwright.
// Run by src/test/browser/run, which starts the packaged service with authentication on and two
// keys of one tenant (admin and worker). Each scenario sets its lcids up through the API, as
// services would, then looks at them in the page, and checks actions through the API again.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const BATON = process.env.BATON_URL;
const ADMIN = process.env.ADMIN_KEY;
const WORKER = process.env.WORKER_KEY;
const MAX_ATTEMPTS = Number(process.env.MAX_ATTEMPTS || 3);
const SCREENSHOT = process.env.SCREENSHOT || '';

let browser;

before(async () => {
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM, args: ['--no-sandbox'] });
});

after(async () => {
  await browser?.close();
});

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
  const answer = await call('POST', `/v1/locks/${lcid}/acquire`, payload === undefined ? { requestId } : { requestId, payload });
  assert.ok(answer.status === 200 || answer.status === 202, `acquire ${requestId}: ${answer.status}`);
  return answer.body;
}

/** A page with the console open on `key`; the requests it sends are collected. */
async function openConsole(key) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const urls = [];
  page.on('request', (request) => urls.push(request.url()));
  await page.goto(BATON + '/console');
  await page.fill('#key', key);
  await page.click('#open');
  return { page, context, urls };
}

test('an lcid with a holder and three queued requests is listed busy, and its queue in order', async () => {
  const lcid = unique('order');
  await acquire(lcid, 'holder');
  await acquire(lcid, 'pay', { amount: 42 });
  await acquire(lcid, 'ship');
  await acquire(lcid, 'invoice');
  const { page, context } = await openConsole(ADMIN);
  try {
    const row = page.locator(`#busy tbody tr[data-lcid="${lcid}"]`);
    await row.waitFor({ timeout: 10_000 });
    assert.equal(await row.locator('td').nth(1).textContent(), 'holder');
    assert.equal(await row.locator('td').nth(5).textContent(), '3');

    await row.click();
    await page.locator('#queue tbody tr').nth(2).waitFor({ timeout: 10_000 });
    assert.equal(await page.locator('#detail-lcid').textContent(), lcid);
    const ids = await page.locator('#queue tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.requestId));
    assert.deepEqual(ids, ['pay', 'ship', 'invoice']);
    assert.equal(await page.locator('#queue tbody tr').first().locator('td.payload').textContent(), '{"amount":42}');
    if (SCREENSHOT) await page.screenshot({ path: SCREENSHOT, fullPage: true });
  } finally {
    await context.close();
  }
});

test('a request killed after max attempts is in the dead letters, and Retry queues it again', async () => {
  const lcid = unique('order');
  let token = (await acquire(lcid, 'poison', { sku: 'A1' })).token;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const aborted = await call('POST', `/v1/locks/${lcid}/abort`,
      { requestId: 'poison', token, requeue: true, reason: 'stock service down' });
    assert.equal(aborted.status, 200);
    if (attempt < MAX_ATTEMPTS) {
      const rescue = await acquire(lcid, 'rescuer-' + attempt);
      assert.equal(rescue.request.requestId, 'poison');
      token = rescue.token;
    }
  }
  assert.equal((await call('GET', `/v1/locks/${lcid}/requests/poison`)).body.state, 'DEAD');

  const { page, context } = await openConsole(ADMIN);
  try {
    const row = page.locator(`#dead tbody tr[data-lcid="${lcid}"][data-request-id="poison"]`);
    await row.waitFor({ timeout: 10_000 });
    assert.equal(await row.locator('td').nth(2).textContent(), String(MAX_ATTEMPTS));
    assert.equal(await row.locator('td').nth(3).textContent(), 'stock service down');
    assert.equal(await row.locator('td.payload').textContent(), '{"sku":"A1"}');

    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      dialog.accept();
    });
    await row.locator('button.retry').click();
    await row.waitFor({ state: 'detached', timeout: 10_000 });
    assert.match(asked, /poison/);
    const view = await call('GET', `/v1/locks/${lcid}/requests/poison`);
    assert.equal(view.body.state, 'QUEUED');
    assert.equal(view.body.attempt, 1);
  } finally {
    await context.close();
  }
});

test('a payload with markup is shown as text and runs nothing', async () => {
  const lcid = unique('order');
  const hostile = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';
  await acquire(lcid, 'holder');
  await acquire(lcid, 'note', hostile);
  const { page, context } = await openConsole(ADMIN);
  try {
    await page.fill('#lookup-lcid', lcid);
    await page.click('#lookup button');
    const payload = page.locator('#queue tbody tr[data-request-id="note"] td.payload');
    await payload.waitFor({ timeout: 10_000 });
    assert.equal(await payload.textContent(), JSON.stringify(hostile));
    assert.equal(await page.locator('#queue img, #queue script').count(), 0);
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
  } finally {
    await context.close();
  }
});

test('a wrong key is refused with a clear message', async () => {
  const { page, context } = await openConsole('not-a-key-of-this-service');
  try {
    await page.locator('#login-error').filter({ hasText: 'refused' }).waitFor({ timeout: 10_000 });
    assert.match(await page.locator('#login-error').textContent(), /refused \(401 Unauthorized\)/);
    assert.equal(await page.locator('#app').isHidden(), true);
  } finally {
    await context.close();
  }
});

test('a worker key sees locks but no operator actions, and the admin API refuses it anyway', async () => {
  const lcid = unique('order');
  await acquire(lcid, 'holder');
  const { page, context } = await openConsole(WORKER);
  try {
    await page.locator('#who').filter({ hasText: 'worker key' }).waitFor({ timeout: 10_000 });
    await page.fill('#lookup-lcid', lcid);
    await page.click('#lookup button');
    await page.locator('#lock dd').first().filter({ hasText: 'yes' }).waitFor({ timeout: 10_000 });
    assert.equal(await page.locator('#dead-section').isHidden(), true);
    assert.equal(await page.locator('#busy-section').isHidden(), true);
    assert.equal(await page.locator('button.retry').count(), 0);
  } finally {
    await context.close();
  }
  assert.equal((await call('GET', '/v1/dead-letters', undefined, WORKER)).status, 403);
  assert.equal((await call('POST', `/v1/locks/${lcid}/requests/holder/retry`, undefined, WORKER)).status, 403);
  assert.equal((await call('GET', `/v1/locks/${lcid}/queue`, undefined, WORKER)).status, 403);
});

test('the key is in no URL and no local storage, only in this tab\'s session storage', async () => {
  const { page, context, urls } = await openConsole(ADMIN);
  try {
    await page.locator('#who').filter({ hasText: 'admin key' }).waitFor({ timeout: 10_000 });
    await page.waitForTimeout(500);
    assert.ok(urls.length > 3, 'the page called the API');
    assert.equal(urls.filter((url) => url.includes(ADMIN)).length, 0);
    assert.equal(page.url().includes(ADMIN), false);
    assert.equal(await page.evaluate(() => localStorage.length), 0);
    assert.equal(await page.evaluate(() => sessionStorage.getItem('baton.console.key')), ADMIN);

    await page.click('#forget');
    assert.equal(await page.evaluate(() => sessionStorage.length), 0);
    assert.equal(await page.locator('#login').isVisible(), true);
  } finally {
    await context.close();
  }
});
