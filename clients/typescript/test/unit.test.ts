/**
 * Unit tests of the client's own rules against tiny local HTTP stubs (never a stub of Baton's
 * logic): retries, backoff, Retry-After, deadlines, non-JSON answers, problem parsing, keep-alive,
 * the holder's lease deadline, batch result maps, the byte order of lockAll, trace context
 * (the fields, the headers, and the holder's baton.work span with a real OpenTelemetry SDK), and
 * token files replaced the way the kubelet replaces a projected token.
 */
import { test, describe, after, before, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SpanStatusCode, context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  BackendUnavailableError, BatchMismatchError, BatonClient, BatonClientOptions, DuplicateRequestError, HandlerError,
  InvalidRequestError, LockLostError, ProblemError, QueueFullError, TransportError, UnauthorizedError,
  UnexpectedResponseError, VERSION, Work, backoffDelay, byteOrder, parseOutcome, problemError,
} from '@baton/client';
import { Hit, Reply, Stub, ok, problem, rejects } from './stub.js';

const stubs: Stub[] = [];
after(async () => {
  await Promise.all(stubs.map((s) => s.close()));
});

async function stub(replies: Reply[], route?: (hit: Hit) => Reply): Promise<Stub> {
  const s = await new Stub(replies, route).start();
  stubs.push(s);
  return s;
}

function client(url: string, options: Partial<BatonClientOptions> = {}): BatonClient {
  return new BatonClient({ url, apiKey: 'k', logger: null, ...options });
}

const QUEUED = { status: 'QUEUED', lcid: 'L', requestId: 'r', position: 2, queueLength: 2 };
const ACQUIRED = { status: 'ACQUIRED', lcid: 'L', requestId: 'r', token: 't', fence: 7, leaseMs: 30000, expiresAt: 'x' };
const RELEASED = { status: 'RELEASED', lcid: 'L', pending: 0 };
const LOCK_VIEW = { lcid: 'L', held: false, fence: null, activeRequestId: null, leaseRemainingMs: 0, queueLength: 0 };

describe('retries', () => {
  test('503 and 500 are retried with the same body', async () => {
    const s = await stub([problem(503, 'BACKEND_UNAVAILABLE'), problem(500, 'INTERNAL_ERROR'), ok(QUEUED, 202)]);
    const outcome = await client(s.url).acquire('L', { requestId: 'r', payload: { a: 1 }, leaseMs: 1000 });
    assert.equal(outcome.status, 'QUEUED');
    assert.equal(s.hits.length, 3);
    assert.equal(new Set(s.hits.map((h) => h.body)).size, 1, 'the same body every time');
    assert.deepEqual(s.bodies()[0], { requestId: 'r', payload: { a: 1 }, leaseMs: 1000 });
    assert.equal(s.hits[0]!.headers.authorization, 'Bearer k');
    assert.equal(s.hits[0]!.headers['content-type'], 'application/json');
  });

  test('Retry-After is honoured', async () => {
    const s = await stub([problem(429, 'QUEUE_FULL', {}, { 'Retry-After': '1' }), ok(QUEUED, 202)]);
    await client(s.url).acquire('L', { requestId: 'r' });
    assert.equal(s.hits.length, 2);
    assert.ok(s.hits[1]!.at - s.hits[0]!.at >= 950, `retried after ${s.hits[1]!.at - s.hits[0]!.at} ms`);
  });

  test('retries stop at the deadline with the last error', async () => {
    const s = await stub([problem(503, 'BACKEND_UNAVAILABLE')]);
    const start = performance.now();
    const error = await rejects(client(s.url, { deadlineMs: 800 }).acquire('L', { requestId: 'r' }), BackendUnavailableError);
    assert.ok(performance.now() - start < 3000, 'bounded by the 800 ms deadline, not the default 30 s');
    assert.ok((error.attempts ?? 0) > 1, `attempts ${error.attempts}`);
    assert.equal(error.status, 503);
    assert.equal(error.code, 'BACKEND_UNAVAILABLE');
  });

  test('a per-call deadline replaces the client one', async () => {
    const s = await stub([problem(503, 'BACKEND_UNAVAILABLE')]);
    const start = performance.now();
    await rejects(client(s.url, { deadlineMs: 60000 }).lock('L', { deadlineMs: 300 }), BackendUnavailableError);
    assert.ok(performance.now() - start < 3000, 'bounded by the 300 ms deadline, not the 60 s one');
  });

  test('QUEUE_FULL after the deadline is typed', async () => {
    const s = await stub([problem(429, 'QUEUE_FULL')]);
    await rejects(client(s.url, { deadlineMs: 300 }).acquire('L', { requestId: 'r' }), QueueFullError);
  });

  test('other 4xx are never retried', async () => {
    const s = await stub([problem(400, 'INVALID_REQUEST', { field: 'leaseMs' })]);
    const error = await rejects(client(s.url).acquire('L', { requestId: 'r', leaseMs: 1 }), InvalidRequestError);
    assert.equal(error.field, 'leaseMs');
    assert.equal(error.status, 400);
    assert.equal(error.attempts, 1);
    assert.equal(s.hits.length, 1);
  });

  test('a 409 with Retry-After is still not retried', async () => {
    const s = await stub([problem(409, 'LOCK_LOST', {}, { 'Retry-After': '1' })]);
    await rejects(client(s.url).heartbeat('L', 't'), LockLostError);
    assert.equal(s.hits.length, 1);
  });

  test('a proxy HTML 502 is an unexpected answer, not retried', async () => {
    const html = '<html><head><title>502 Bad Gateway</title></head><body>Bad Gateway</body></html>';
    const s = await stub([{ status: 502, contentType: 'text/html', body: html }]);
    const error = await rejects(client(s.url).acquire('L', { requestId: 'r' }), UnexpectedResponseError);
    assert.equal(error.status, 502);
    assert.equal(error.bodyText, html);
    assert.equal(error.contentType, 'text/html');
    assert.equal(s.hits.length, 1);
  });

  test('an HTML 503 is not retried either, nor JSON without a code', async () => {
    const s = await stub([{ status: 503, contentType: 'text/html', body: '<html>down</html>' }]);
    const error = await rejects(client(s.url).lock('L'), UnexpectedResponseError);
    assert.equal(error.status, 503);
    assert.equal(s.hits.length, 1);
    const t = await stub([{ status: 500, contentType: 'application/json', body: '{"error":"x"}' }]);
    await rejects(client(t.url).lock('L'), UnexpectedResponseError);
    assert.equal(t.hits.length, 1);
  });

  test('a success that is not JSON is unexpected', async () => {
    const s = await stub([{ status: 200, contentType: 'text/plain', body: 'hello' }]);
    const error = await rejects(client(s.url).lock('L'), UnexpectedResponseError);
    assert.equal(error.bodyText, 'hello');
    assert.equal(s.hits.length, 1);
    const t = await stub([{ status: 200, contentType: 'application/json', body: '{"status":"BOGUS","lcid":"L"}' }]);
    await rejects(client(t.url).acquire('L', { requestId: 'r' }), UnexpectedResponseError);
  });

  test('connection refused is a transport error after retries', async () => {
    const s = await stub([ok({})]);
    const url = s.url;
    await s.close();
    stubs.splice(stubs.indexOf(s), 1);
    const start = performance.now();
    const error = await rejects(client(url, { deadlineMs: 500 }).lock('L'), TransportError);
    assert.equal(error.timedOut, false);
    assert.ok((error.attempts ?? 0) > 1);
    assert.ok(performance.now() - start < 3000, 'bounded by the 500 ms deadline');
  });

  test('an attempt that times out is retried', async () => {
    let n = 0;
    const s = await stub([], () => (n++ === 0 ? { status: 200, hang: true } : ok(LOCK_VIEW)));
    const view = await client(s.url, { timeoutMs: 200 }).lock('L');
    assert.equal(view.held, false);
    assert.equal(s.hits.length, 2);
  });

  test('the last timeout is a transport error that says so', async () => {
    const s = await stub([{ status: 200, hang: true }]);
    const error = await rejects(client(s.url, { timeoutMs: 100, deadlineMs: 350 }).lock('L'), TransportError);
    assert.equal(error.timedOut, true);
  });

  test('a long-poll gets waitMs + 5 s per attempt, not the plain timeout', async () => {
    const s = await stub([{ ...ok(QUEUED, 202), delayMs: 600 }]);
    const outcome = await client(s.url, { timeoutMs: 200 }).acquire('L', { requestId: 'r', mode: 'wait', waitMs: 1000 });
    assert.equal(outcome.status, 'QUEUED');
    assert.equal(s.hits.length, 1);
    assert.deepEqual(s.bodies()[0], { requestId: 'r', mode: 'wait', waitMs: 1000 });
  });

  test('an aborted call rejects at once and is not retried', async () => {
    const s = await stub([{ status: 200, hang: true }]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const start = performance.now();
    await rejects(client(s.url).lock('L', { signal: controller.signal }), TransportError);
    assert.ok(performance.now() - start < 3000, 'ended by the signal, not by the 10 s timeout');
    assert.equal(s.hits.length, 1);
  });

  test('keep-alive reuses one connection', async () => {
    const s = await stub([ok(LOCK_VIEW)]);
    const c = client(s.url);
    for (let i = 0; i < 10; i++) await c.lock('L');
    assert.equal(s.hits.length, 10);
    // Node's fetch puts a socket back in its pool a tick after the answer was read, so a call sent
    // at once after another may open a second one; from then on they are reused.
    assert.ok(s.connections <= 2, `${s.connections} connections for 10 calls`);
  });
});

describe('problems and answers', () => {
  test('typed 409s carry their fields', async () => {
    const s = await stub([
      problem(409, 'LOCK_LOST'),
      problem(409, 'DUPLICATE_REQUEST', { state: 'DONE', attempt: 1, result: { x: 1 } }),
      problem(409, 'BATCH_MISMATCH', { activeRequestIds: ['a', 'b'] }),
    ]);
    const c = client(s.url);
    const lost = await rejects(c.heartbeat('L', 'tok'), LockLostError);
    assert.equal(lost.byClient, false);
    const dup = await rejects(c.acquire('L', { requestId: 'r' }), DuplicateRequestError);
    assert.equal(dup.state, 'DONE');
    assert.deepEqual(dup.result, { x: 1 });
    const mismatch = await rejects(c.complete('L', 'tok', { completed: { a: undefined } }), BatchMismatchError);
    assert.deepEqual(mismatch.activeRequestIds, ['a', 'b']);
  });

  test('problemError keeps the whole body and unknown codes', () => {
    const e = problemError(418, { code: 'TEAPOT', detail: 'short and stout', extra: 1 });
    assert.ok(e instanceof ProblemError);
    assert.equal(e.code, 'TEAPOT');
    assert.equal(e.body.extra, 1);
    assert.match(e.message, /418 TEAPOT: short and stout/);
  });

  test('claim 204 is null', async () => {
    const s = await stub([{ status: 204 }]);
    assert.equal(await client(s.url).claim({ lcidPrefix: 'p-' }), null);
    assert.deepEqual(s.bodies()[0], { lcidPrefix: 'p-' });
  });

  test('a batch complete body', async () => {
    const s = await stub([ok(RELEASED)]);
    const c = client(s.url);
    const out = await c.complete('L', 'tok', { completed: { a: { v: 1 }, b: undefined }, take: 8 });
    assert.equal(out.status, 'RELEASED');
    await c.complete('L', 'tok', { completed: new Map([['a', null], ['b', 2]]) });
    assert.deepEqual(s.bodies(), [
      { token: 'tok', completed: [{ requestId: 'a', result: { v: 1 } }, { requestId: 'b' }], take: 8 },
      { token: 'tok', completed: [{ requestId: 'a' }, { requestId: 'b', result: 2 }] },
    ]);
    await assert.rejects(c.complete('L', 'tok', { requestId: 'a', completed: { a: 1 } }), TypeError);
  });

  test('abort, withdraw and retryDeadLetter bodies', async () => {
    const s = await stub([], (hit) => (hit.path.endsWith('/retry') ? ok(QUEUED, 202) : ok(RELEASED)));
    const c = client(s.url);
    await c.abort('L', 'tok', 'r', { requeue: true, reason: 'x'.repeat(2000) });
    await c.withdraw('L', 'r', { reason: 'gone' });
    await c.retryDeadLetter('L', 'r');
    const [abort, withdraw, retried] = s.bodies() as [Record<string, unknown>, unknown, unknown];
    assert.equal((abort.reason as string).length, 1024);
    assert.deepEqual({ ...abort, reason: undefined }, { requestId: 'r', token: 'tok', requeue: true, reason: undefined });
    assert.deepEqual(withdraw, { requestId: 'r', reason: 'gone' });
    assert.equal(retried, undefined);
    assert.deepEqual(s.paths(), ['/v1/locks/L/abort', '/v1/locks/L/abort', '/v1/locks/L/requests/r/retry']);
  });

  test('paths are quoted', async () => {
    const s = await stub([ok({ lcid: 'a:b@c', requestId: 'r.1', state: 'DONE', attempt: 1 })]);
    await client(`${s.url}/`) // a trailing slash on the URL is dropped
      .request('a:b@c', 'r.1', { waitMs: 100 });
    assert.equal(s.paths()[0], '/v1/locks/a%3Ab%40c/requests/r.1?waitMs=100');
  });

  test('NEXT parses with its batch; unknown fields are ignored', () => {
    const out = parseOutcome({
      status: 'NEXT', lcid: 'L', token: 'secret', fence: 2 ** 52, leaseMs: 1000, expiresAt: 't',
      request: { requestId: 'a', attempt: 2 },
      requests: [{ requestId: 'a', attempt: 2 }, { requestId: 'b', payload: [1], attempt: 1 }], newField: 1,
    });
    assert.equal(out.status, 'NEXT');
    if (out.status !== 'NEXT') return;
    assert.deepEqual(out.requests.map((r) => r.requestId), ['a', 'b']);
    assert.deepEqual(out.requests[1]!.payload, [1]);
    assert.equal(out.fence, 2 ** 52);
    const v1 = parseOutcome({ status: 'NEXT', lcid: 'L', token: 't', fence: 1, leaseMs: 1000, expiresAt: 't',
      request: { requestId: 'a', attempt: 1 } });
    assert.equal(v1.status === 'NEXT' && v1.requests.length, 1);
  });
});

describe('pure rules', () => {
  test('backoff: full jitter, base 100 ms, cap 5 s, at least Retry-After', () => {
    assert.equal(backoffDelay(0, undefined, () => 1), 100);
    assert.equal(backoffDelay(3, undefined, () => 1), 800);
    assert.equal(backoffDelay(20, undefined, () => 1), 5000);
    assert.equal(backoffDelay(20, undefined, () => 0), 0);
    assert.equal(backoffDelay(2, undefined, () => 0.5), 200);
    assert.equal(backoffDelay(0, 2000, () => 1), 2000);
    assert.equal(backoffDelay(10, 1000, () => 1), 5000);
  });

  test('lockAll order: duplicates removed, UTF-8 byte order (not UTF-16)', () => {
    assert.deepEqual(byteOrder(['b', 'a', 'B', 'a', 'a-1', 'a.1']), ['B', 'a', 'a-1', 'a.1', 'b']);
    // U+FF5E sorts before U+1F600 in UTF-8 bytes (EF.. < F0..), after it in UTF-16 code units.
    const [fullwidth, emoji] = ['\uFF5E', '\u{1F600}'];
    assert.deepEqual([emoji, fullwidth].sort(), [emoji, fullwidth]);
    assert.deepEqual(byteOrder([emoji, fullwidth]), [fullwidth, emoji]);
  });

  test('the version is the package version', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    assert.equal(VERSION, pkg.version);
  });
});

describe('the holder', () => {
  test('heartbeats that cannot renew cancel the handler at the deadline; nothing is completed', async () => {
    const s = await stub([], (hit) => (hit.path.endsWith('/acquire') ? ok({ ...ACQUIRED, leaseMs: 600 })
      : problem(503, 'BACKEND_UNAVAILABLE')));
    let cancelledAfter = -1;
    const error = await rejects(client(s.url).run('L', async (work: Work) => {
      const start = performance.now();
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 5000);
        work.signal.addEventListener('abort', () => {
          clearTimeout(t);
          resolve();
        });
      });
      cancelledAfter = performance.now() - start;
      work.check();
    }, { requestId: 'r' }), LockLostError);
    assert.equal(error.byClient, true);
    assert.ok(cancelledAfter >= 0 && cancelledAfter < 1500, `cancelled after ${cancelledAfter} ms`);
    assert.ok(s.paths().some((p) => p.endsWith('/heartbeat')));
    assert.ok(!s.paths().some((p) => p.endsWith('/complete') || p.endsWith('/abort')), 'never completes or aborts a lost lock');
  });

  test('LOCK_LOST on a heartbeat aborts the signal with the error', async () => {
    const s = await stub([], (hit) => (hit.path.endsWith('/acquire') ? ok({ ...ACQUIRED, leaseMs: 600 })
      : problem(409, 'LOCK_LOST')));
    let reason: unknown;
    await rejects(client(s.url).run('L', async (work) => {
      await new Promise((resolve) => work.signal.addEventListener('abort', resolve));
      reason = work.signal.reason;
      work.signal.throwIfAborted();
    }), LockLostError);
    assert.ok(reason instanceof LockLostError && !reason.byClient);
    assert.ok(!s.paths().some((p) => p.endsWith('/complete') || p.endsWith('/abort')));
  });

  test('heartbeats every lease/3 keep a long handler going', async () => {
    const s = await stub([], (hit) => (hit.path.endsWith('/complete') ? ok(RELEASED) : ok({ ...ACQUIRED, leaseMs: 600 })));
    const report = await client(s.url).run('L', async (work) => {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      work.check();
      return 'done';
    }, { requestId: 'r' });
    assert.deepEqual(report.handled, ['r']);
    const beats = s.paths().filter((p) => p.endsWith('/heartbeat')).length;
    assert.ok(beats >= 3 && beats <= 10, `${beats} heartbeats in 1.5 s with a 600 ms lease`);
    assert.deepEqual(s.bodies().at(-1), { token: 't', requestId: 'r', result: 'done' });
  });

  test('a throwing handler aborts with requeue and its message; run rejects with HandlerError', async () => {
    const s = await stub([], (hit) => (hit.path.endsWith('/acquire') ? ok(ACQUIRED) : ok(RELEASED)));
    const boom = new Error('boom-42');
    const error = await rejects(client(s.url).run('L', () => {
      throw boom;
    }, { requestId: 'r' }), HandlerError);
    assert.equal(error.cause, boom);
    assert.deepEqual(error.requestIds, ['r']);
    assert.equal(error.abortError, undefined);
    assert.deepEqual(s.paths(), ['/v1/locks/L/acquire', '/v1/locks/L/abort']);
    assert.deepEqual(s.bodies()[1], { requestId: 'r', token: 't', requeue: true, reason: 'boom-42' });
  });

  test('a batch handler returns a map requestId -> result', async () => {
    const next = {
      status: 'NEXT', lcid: 'L', token: 't', fence: 9, leaseMs: 30000, expiresAt: 'x', request: { requestId: 'a', attempt: 1 },
      requests: [{ requestId: 'a', attempt: 1 }, { requestId: 'b', attempt: 2, payload: { n: 2 } }, { requestId: 'c', attempt: 1 }],
    };
    const s = await stub([], (hit) => (hit.path.endsWith('/acquire') ? ok(next) : ok(RELEASED)));
    const seen: Work[] = [];
    const report = await client(s.url).run('L', (work) => {
      seen.push(work);
      return { a: { ok: 1 }, b: 'two' };
    }, { requestId: 'c', take: 3 });
    assert.deepEqual(report.handled, ['a', 'b', 'c']);
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.fence, 9);
    assert.deepEqual(seen[0]!.requests[1], { requestId: 'b', attempt: 2, payload: { n: 2 } });
    assert.deepEqual(s.bodies()[0], { requestId: 'c', take: 3 });
    assert.deepEqual(s.bodies()[1], {
      token: 't', completed: [{ requestId: 'a', result: { ok: 1 } }, { requestId: 'b', result: 'two' }, { requestId: 'c' }], take: 3,
    });
  });

  test('a batch handler that returns no map is a handler error: requeued, not completed', async () => {
    const next = {
      status: 'NEXT', lcid: 'L', token: 't', fence: 9, leaseMs: 30000, expiresAt: 'x', request: { requestId: 'a', attempt: 1 },
      requests: [{ requestId: 'a', attempt: 1 }, { requestId: 'b', attempt: 1 }],
    };
    const s = await stub([], (hit) => (hit.path.endsWith('/acquire') ? ok(next) : ok(RELEASED)));
    const error = await rejects(client(s.url).run('L', () => 'one result for two', { take: 2 }), HandlerError);
    assert.ok(error.cause instanceof TypeError);
    assert.deepEqual(s.paths().slice(1), ['/v1/locks/L/abort']);
  });

  test('QUEUED returns at once with the position', async () => {
    const s = await stub([ok(QUEUED, 202)]);
    let submitted = '';
    const report = await client(s.url).run('L', () => assert.fail('never runs'), {
      requestId: 'r', onSubmit: (o) => {
        submitted = o.outcome?.status ?? 'none';
      },
    });
    assert.deepEqual(report, { status: 'QUEUED', lcid: 'L', requestId: 'r', position: 2, handled: [], handledOwn: false });
    assert.equal(submitted, 'QUEUED');
  });

  test('lockAll takes turns in byte order and completes in reverse', async () => {
    const s = await stub([], (hit) => {
      const lcid = decodeURIComponent(hit.path.split('/')[3]!);
      if (hit.path.endsWith('/acquire')) {
        const body = JSON.parse(hit.body) as { requestId: string; mode: string };
        assert.equal(body.mode, 'wait');
        return ok({ ...ACQUIRED, lcid, requestId: body.requestId, fence: lcid.length });
      }
      return ok({ ...RELEASED, lcid });
    });
    const result = await client(s.url).lockAll(['b', 'a', 'ab', 'a'], (work) => {
      assert.deepEqual(work.fences, { a: 1, ab: 2, b: 1 });
      return 'ok';
    });
    assert.equal(result, 'ok');
    assert.deepEqual(s.hits.map((h) => `${h.path.split('/')[3]} ${h.path.split('/')[4]}`),
      ['a acquire', 'ab acquire', 'b acquire', 'b complete', 'ab complete', 'a complete']);
  });

  test('lockAll aborts what it holds when the handler throws', async () => {
    const s = await stub([], (hit) => {
      const lcid = hit.path.split('/')[3]!;
      if (hit.path.endsWith('/acquire')) return ok({ ...ACQUIRED, lcid, requestId: (JSON.parse(hit.body) as { requestId: string }).requestId });
      return ok({ ...RELEASED, lcid });
    });
    await assert.rejects(client(s.url).lockAll(['y', 'x'], () => {
      throw new Error('no');
    }), /no/);
    assert.deepEqual(s.hits.map((h) => `${h.path.split('/')[3]} ${h.path.split('/')[4]}`),
      ['x acquire', 'y acquire', 'y abort', 'x abort']);
    assert.equal((s.bodies()[2] as { requeue?: boolean }).requeue, undefined);
  });

  test('the claim poller keeps polling after 204 and after work, until stopped', async () => {
    const next = {
      status: 'NEXT', lcid: 'p-1', token: 't', fence: 3, leaseMs: 30000, expiresAt: 'x',
      request: { requestId: 'o1', attempt: 2 }, requests: [{ requestId: 'o1', attempt: 2 }],
    };
    let claims = 0;
    const s = await stub([], (hit) => {
      if (hit.path === '/v1/claims') return ++claims === 2 ? ok(next) : { status: 204 };
      return ok({ ...RELEASED, lcid: 'p-1' });
    });
    const stop = new AbortController();
    const answers: (string | null)[] = [];
    const seen: string[] = [];
    const poller = client(s.url).runClaims((work) => {
      seen.push(`${work.requestId}/${work.attempt}`);
    }, {
      lcidPrefix: 'p-', leaseMs: 5000, signal: stop.signal, onClaim: (n) => {
        answers.push(n && n.lcid);
        if (answers.length >= 4) stop.abort();
      },
    });
    assert.deepEqual(await poller, { claims: 1, handled: 1, failed: 0 });
    assert.deepEqual(answers, [null, 'p-1', null, null]);
    assert.deepEqual(seen, ['o1/2']);
    assert.deepEqual(s.bodies()[0], { leaseMs: 5000, lcidPrefix: 'p-' });
  });

  test('awaitTurn withdraws the request when its time runs out', async () => {
    const s = await stub([], (hit) => (hit.path.endsWith('/acquire') ? { ...ok(QUEUED, 202), delayMs: 50 } : ok(RELEASED)));
    await assert.rejects(client(s.url).awaitTurn('L', 'w', { timeoutMs: 300 }), { name: 'WaitTimeoutError' });
    const last = s.hits.at(-1)!;
    assert.equal(last.path, '/v1/locks/L/abort');
    assert.deepEqual(JSON.parse(last.body), { requestId: 'w', reason: 'the waiter gave up' });
  });
});

// ------------------------------------------------------------------ trace context

const TP1 = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const TP2 = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';
/** Well formed, but an all-zero trace id is not a valid span context: no link. */
const TP_ZERO = '00-00000000000000000000000000000000-b7ad6b7169203331-01';

const TRACED_NEXT = {
  status: 'NEXT', lcid: 'L', token: 't', fence: 9, leaseMs: 30000, expiresAt: 'x',
  request: { requestId: 'a', attempt: 1, traceparent: TP1, tracestate: 'vendor=x' },
  requests: [
    { requestId: 'a', attempt: 1, traceparent: TP1, tracestate: 'vendor=x' },
    { requestId: 'b', attempt: 1, payload: { secret: 1 }, traceparent: TP2 },
    { requestId: 'c', attempt: 1, traceparent: TP_ZERO },
    { requestId: 'd', attempt: 1 },
  ],
};

/** A stub Baton for the holder: `first` answers acquires, every complete or abort is RELEASED. */
function holderStub(first: unknown): Promise<Stub> {
  return stub([], (hit) => {
    if (hit.path.endsWith('/acquire')) {
      const lcid = decodeURIComponent(hit.path.split('/')[3]!);
      const body = JSON.parse(hit.body) as { requestId: string };
      return ok(first ?? { ...ACQUIRED, lcid, requestId: body.requestId, fence: lcid.length, traceparent: TP1 });
    }
    return ok(RELEASED);
  });
}

describe('trace context', () => {
  test('ACQUIRED, NEXT request and requests carry traceparent / tracestate; absent is undefined', () => {
    const acquired = parseOutcome({ ...ACQUIRED, traceparent: TP1, tracestate: 'vendor=x', future: true });
    assert.ok(acquired.status === 'ACQUIRED');
    assert.deepEqual([acquired.traceparent, acquired.tracestate], [TP1, 'vendor=x']);
    const plain = parseOutcome(ACQUIRED);
    assert.ok(plain.status === 'ACQUIRED');
    assert.equal(plain.traceparent, undefined);
    assert.ok(!('traceparent' in plain) && !('tracestate' in plain));
    const next = parseOutcome(TRACED_NEXT);
    assert.ok(next.status === 'NEXT');
    assert.deepEqual(next.request, { requestId: 'a', attempt: 1, traceparent: TP1, tracestate: 'vendor=x' });
    assert.deepEqual(next.requests.map((r) => [r.traceparent, r.tracestate]),
      [[TP1, 'vendor=x'], [TP2, undefined], [TP_ZERO, undefined], [undefined, undefined]]);
    assert.deepEqual(next.requests[3], { requestId: 'd', attempt: 1 });
  });

  test('the request view carries them; absent is undefined', async () => {
    const view = { lcid: 'L', requestId: 'r', state: 'QUEUED', position: 1, attempt: 1 };
    const s = await stub([ok({ ...view, traceparent: TP2, tracestate: 'a=1,b=2' }), ok(view)]);
    const c = client(s.url);
    const traced = await c.request('L', 'r');
    assert.deepEqual([traced.traceparent, traced.tracestate], [TP2, 'a=1,b=2']);
    const untraced = await c.request('L', 'r');
    assert.deepEqual([untraced.traceparent, untraced.tracestate], [undefined, undefined]);
  });

  test('acquire and run send the trace context given; none without one (and no tracer provider)', async () => {
    const s = await stub([], (hit) => (hit.path.endsWith('/acquire') ? ok(QUEUED, 202) : ok(RELEASED)));
    const c = client(s.url);
    await c.acquire('L', { requestId: 'r1', traceparent: TP1, tracestate: 'vendor=x' });
    await c.acquire('L', { requestId: 'r2' });
    await c.run('L', () => assert.fail('never runs'), { requestId: 'r3', traceparent: TP2 });
    await c.acquire('L', { requestId: 'r4', traceparent: 'not\na header' });
    const sent = s.hits.map((h) => [h.headers.traceparent, h.headers.tracestate]);
    assert.deepEqual(sent, [[TP1, 'vendor=x'], [undefined, undefined], [TP2, undefined], [undefined, undefined]]);
    assert.deepEqual(s.bodies()[0], { requestId: 'r1' }, 'trace context goes in headers, never the body');
  });

  test('awaitTurn and lockAll send it too', async () => {
    const s = await holderStub(undefined);
    const c = client(s.url);
    const turn = await c.awaitTurn('w', 'w1', { traceparent: TP2, tracestate: 'k=v' });
    assert.equal(turn.traceparent, TP1, 'what the service stored, from the ACQUIRED answer');
    await turn.complete();
    await c.lockAll(['x', 'y'], () => undefined, { traceparent: TP1 });
    const acquires = s.hits.filter((h) => h.path.endsWith('/acquire'));
    assert.deepEqual(acquires.map((h) => [h.headers.traceparent, h.headers.tracestate]),
      [[TP2, 'k=v'], [TP1, undefined], [TP1, undefined]]);
  });

  test('without a tracer provider (the API\'s no-op) the holder works as before', async () => {
    const s = await holderStub(TRACED_NEXT);
    const seen: string[] = [];
    const report = await client(s.url).run('L', (work) => {
      seen.push(...work.requests.map((r) => r.requestId));
      assert.equal(trace.getActiveSpan()?.isRecording() ?? false, false);
      return { a: 1 };
    }, { requestId: 'd', take: 4 });
    assert.deepEqual(report.handled, ['a', 'b', 'c', 'd']);
    assert.deepEqual(seen, ['a', 'b', 'c', 'd']);
    assert.equal(s.hits[0]!.headers.traceparent, undefined, 'no span, no header');
  });

  test('without @opentelemetry/api installed the package loads and the holder works', async () => {
    // A copy of the built package where no node_modules can be found: the import of the API fails.
    const dir = mkdtempSync(join(tmpdir(), 'baton-no-otel-'));
    try {
      const dist = fileURLToPath(new URL('../', import.meta.url));
      for (const f of readdirSync(dist)) if (f.endsWith('.js')) copyFileSync(join(dist, f), join(dir, f));
      writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
      writeFileSync(join(dir, 'main.js'), `
        import { BatonClient } from './index.js';
        let missing = false;
        try { await import('@opentelemetry/api'); } catch { missing = true; }
        const c = new BatonClient({ url: process.argv[2], logger: null });
        const seen = [];
        const report = await c.run('L', (w) => { seen.push(w.requestId); return 'ok'; }, { requestId: 'r' });
        console.log(JSON.stringify({ missing, seen, handled: report.handled }));
      `);
      const s = await holderStub({ ...ACQUIRED, traceparent: TP1 });
      const out = await new Promise<string>((resolve, reject) => {
        execFile(process.execPath, [join(dir, 'main.js'), s.url], { cwd: dir, timeout: 20000 }, (error, stdout, stderr) => {
          if (error) reject(new Error(`${error.message}\n${stderr}`));
          else resolve(stdout);
        });
      });
      assert.deepEqual(JSON.parse(out), { missing: true, seen: ['r'], handled: ['r'] });
      assert.equal(s.hits[0]!.headers.traceparent, undefined);
      assert.deepEqual(s.paths(), ['/v1/locks/L/acquire', '/v1/locks/L/complete']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('trace context with OpenTelemetry', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = trace.getTracer('test');

  before(() => {
    // The async-hooks context manager: without it no span is active across the handler's awaits.
    assert.ok(context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()));
    assert.ok(trace.setGlobalTracerProvider(provider));
  });
  after(async () => {
    trace.disable();
    context.disable();
    await provider.shutdown();
  });
  beforeEach(() => exporter.reset());

  async function spans(name: string): Promise<ReadableSpan[]> {
    await provider.forceFlush();
    return exporter.getFinishedSpans().filter((span) => span.name === name);
  }

  function links(span: ReadableSpan): unknown[] {
    return span.links.map((l) => [l.context.traceId, l.context.spanId, l.context.traceFlags, l.context.isRemote,
      l.context.traceState?.serialize()]);
  }

  test('acquire sends the current span\'s context; none outside a span', async () => {
    const s = await stub([ok(QUEUED, 202)]);
    const c = client(s.url);
    let caller = { traceId: '', spanId: '' };
    await tracer.startActiveSpan('caller', async (span) => {
      caller = span.spanContext();
      await c.acquire('L', { requestId: 'r1' });
      await c.acquire('L', { requestId: 'r2', traceparent: TP2 }); // the caller's own wins
      span.end();
    });
    await c.acquire('L', { requestId: 'r3' });
    assert.deepEqual(s.hits.map((h) => h.headers.traceparent), [`00-${caller.traceId}-${caller.spanId}-01`, TP2, undefined]);
  });

  test('the handler runs in a baton.work span: links, attributes, current inside the handler', async () => {
    const s = await holderStub(TRACED_NEXT);
    const c = client(s.url);
    let active: string | undefined;
    let caller = { traceId: '', spanId: '' };
    const report = await tracer.startActiveSpan('caller', async (span) => {
      caller = span.spanContext();
      try {
        return await c.run('L', async (work) => {
          await new Promise((resolve) => setTimeout(resolve, 10)); // the span stays current across awaits
          active = trace.getActiveSpan()?.spanContext().spanId;
          tracer.startSpan('app.write').end();
          return Object.fromEntries(work.requests.map((r) => [r.requestId, 'ok']));
        }, { requestId: 'd', take: 4 });
      } finally {
        span.end();
      }
    });
    assert.deepEqual(report.handled, ['a', 'b', 'c', 'd']);
    const [work, ...more] = await spans('baton.work');
    assert.ok(work, 'a baton.work span');
    assert.equal(more.length, 0);
    assert.deepEqual(work.attributes, { 'baton.lcid': 'L', 'baton.request_id': 'a', 'baton.fence': 9, 'baton.batch_size': 4 });
    assert.deepEqual(links(work), [
      ['4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7', 1, true, 'vendor=x'],
      ['0af7651916cd43dd8448eb211c80319c', 'b7ad6b7169203331', 0, true, undefined],
    ]);
    assert.equal(work.status.code, SpanStatusCode.UNSET);
    assert.equal(work.spanContext().traceId, caller.traceId, 'a child of the span current at run()');
    assert.equal(work.parentSpanContext?.spanId, caller.spanId);
    assert.equal(active, work.spanContext().spanId, 'current inside the handler');
    const [write] = await spans('app.write');
    assert.equal(write?.parentSpanContext?.spanId, work.spanContext().spanId, "the application's span nests under it");
    assert.equal(s.hits[0]!.headers.traceparent, `00-${caller.traceId}-${caller.spanId}-01`);
  });

  test('one span per handler call; a throwing handler records the exception and the error status', async () => {
    const s = await holderStub({ ...ACQUIRED, traceparent: TP2, tracestate: 'k=v' });
    const error = await rejects(client(s.url).run('L', () => {
      throw new Error('boom-7');
    }, { requestId: 'r', traceparent: TP2, tracestate: 'k=v' }), HandlerError);
    assert.equal((error.cause as Error).message, 'boom-7');
    const [work, ...more] = await spans('baton.work');
    assert.ok(work);
    assert.equal(more.length, 0);
    assert.deepEqual(work.attributes, { 'baton.lcid': 'L', 'baton.request_id': 'r', 'baton.fence': 7 });
    assert.deepEqual(links(work), [['0af7651916cd43dd8448eb211c80319c', 'b7ad6b7169203331', 0, true, 'k=v']]);
    assert.equal(work.status.code, SpanStatusCode.ERROR);
    assert.equal(work.events[0]?.name, 'exception');
    assert.equal(work.events[0]?.attributes?.['exception.message'], 'boom-7');
    assert.equal(work.parentSpanContext, undefined, 'no span was current at run()');
    assert.ok(work.ended);
  });

  test('the claim poller and lockAll run their handlers in baton.work spans too', async () => {
    const claimed = { ...TRACED_NEXT, lcid: 'p-1', requests: TRACED_NEXT.requests.slice(0, 1) };
    let claims = 0;
    const s = await stub([], (hit) => {
      if (hit.path === '/v1/claims') return ++claims === 1 ? ok(claimed) : { status: 204 };
      if (hit.path.endsWith('/acquire')) {
        const body = JSON.parse(hit.body) as { requestId: string };
        return ok({ ...ACQUIRED, lcid: hit.path.split('/')[3]!, requestId: body.requestId, fence: 3, traceparent: TP1 });
      }
      return ok(RELEASED);
    });
    const c = client(s.url);
    const stop = new AbortController();
    let inClaim: string | undefined;
    await c.runClaims(() => {
      inClaim = trace.getActiveSpan()?.spanContext().spanId;
      stop.abort();
    }, { signal: stop.signal });
    let inLockAll: string | undefined;
    await c.lockAll(['y', 'x'], () => {
      inLockAll = trace.getActiveSpan()?.spanContext().spanId;
    });
    const [claim, lockAll] = await spans('baton.work');
    assert.ok(claim && lockAll);
    assert.deepEqual(claim.attributes, { 'baton.lcid': 'p-1', 'baton.request_id': 'a', 'baton.fence': 9 });
    assert.deepEqual(links(claim), [['4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7', 1, true, 'vendor=x']]);
    assert.equal(inClaim, claim.spanContext().spanId);
    assert.deepEqual(lockAll.attributes, { 'baton.lcids': ['x', 'y'], 'baton.fences': [3, 3] });
    assert.equal(lockAll.links.length, 2);
    assert.equal(inLockAll, lockAll.spanContext().spanId);
  });
});

// ------------------------------------------------------------------ token files

describe('token files', () => {
  const dirs: string[] = [];
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /**
   * A projected volume as the kubelet writes it: `token` -> `..data/token`, and `..data` a symlink
   * to a versioned folder, swapped by a rename so that a reader never sees half a token.
   */
  function volume(token: string): { dir: string; path: string; rotate: (next: string) => void } {
    const dir = mkdtempSync(join(tmpdir(), 'baton-token-'));
    dirs.push(dir);
    let version = 0;
    const rotate = (next: string): void => {
      const folder = `..v${++version}`;
      mkdirSync(join(dir, folder));
      writeFileSync(join(dir, folder, 'token'), next);
      symlinkSync(folder, join(dir, '..data_tmp'));
      renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    };
    rotate(token);
    symlinkSync(join('..data', 'token'), join(dir, 'token'));
    return { dir, path: join(dir, 'token'), rotate };
  }

  const tokens = (s: Stub): (string | undefined)[] => s.hits.map((h) => h.headers.authorization);

  test('the header carries the file\'s token, and the new one once the file is replaced and tokenRefreshMs passed', async () => {
    const v = volume('jwt-1\n');
    const s = await stub([ok(LOCK_VIEW)]);
    const eager = client(s.url, { apiKey: undefined, tokenFile: v.path, tokenRefreshMs: 0 });
    const cached = client(s.url, { apiKey: undefined, tokenFile: v.path });
    await eager.lock('L');
    await cached.lock('L');
    v.rotate('jwt-2\n');
    await eager.lock('L');
    await cached.lock('L');
    assert.deepEqual(tokens(s), ['Bearer jwt-1', 'Bearer jwt-1', 'Bearer jwt-2', 'Bearer jwt-1'],
      'the default 30 s interval reuses the token read');
  });

  test('a 401 with a replaced file is repeated once, at once, with the new token', async () => {
    const v = volume('jwt-1');
    const s = await stub([], (hit) => (hit.headers.authorization === 'Bearer jwt-2' ? ok(QUEUED, 202)
      : problem(401, 'UNAUTHORIZED')));
    const c = client(s.url, { apiKey: undefined, tokenFile: v.path });
    v.rotate('jwt-2');
    const outcome = await c.acquire('L', { requestId: 'r', payload: { a: 1 } });
    assert.equal(outcome.status, 'QUEUED');
    assert.deepEqual(tokens(s), ['Bearer jwt-1', 'Bearer jwt-2'], 'read again despite the 30 s interval');
    assert.equal(s.hits[0]!.body, s.hits[1]!.body);

    const refused = await stub([problem(401, 'UNAUTHORIZED')]);
    const d = client(refused.url, { apiKey: undefined, tokenFile: v.path });
    v.rotate('jwt-3');
    const error = await rejects(d.lock('L'), UnauthorizedError);
    assert.deepEqual(tokens(refused), ['Bearer jwt-2', 'Bearer jwt-3'], 'never a second repeat');
    assert.equal(error.status, 401);
  });

  test('a 401 with the same file is the UnauthorizedError after one request', async () => {
    const v = volume('jwt-1');
    const s = await stub([problem(401, 'UNAUTHORIZED')]);
    const error = await rejects(client(s.url, { apiKey: undefined, tokenFile: v.path, tokenRefreshMs: 0 }).lock('L'),
      UnauthorizedError);
    assert.equal(s.hits.length, 1);
    assert.equal(error.attempts, 1);
    assert.equal(error.code, 'UNAUTHORIZED');
    assert.ok(!error.message.includes('jwt-1'));
  });

  test('apiKey and tokenFile together are a configuration error', () => {
    const v = volume('jwt-1');
    assert.throws(() => new BatonClient({ url: 'http://127.0.0.1:1', apiKey: 'k', tokenFile: v.path }),
      { name: 'TypeError', message: 'give apiKey or tokenFile, not both' });
    assert.throws(() => new BatonClient({ url: 'http://127.0.0.1:1', tokenFile: v.path, tokenRefreshMs: -1 }), TypeError);
  });

  test('a file that is missing, empty or no header value fails the constructor, naming the path, never the token', () => {
    const v = volume('secret-jwt with a space');
    const missing = join(v.dir, 'nowhere', 'token');
    assert.throws(() => new BatonClient({ url: 'http://127.0.0.1:1', tokenFile: missing }),
      (error: Error) => error.message === `token file ${missing}: cannot be read (ENOENT)`);
    assert.throws(() => new BatonClient({ url: 'http://127.0.0.1:1', tokenFile: v.path }),
      (error: Error) => error.message.includes(v.path) && !error.message.includes('secret'));
    v.rotate(' \n');
    assert.throws(() => new BatonClient({ url: 'http://127.0.0.1:1', tokenFile: v.path }),
      { message: `token file ${v.path}: is empty` });
  });

  test('a failed re-read keeps the last token and warns once, without the token', async () => {
    const v = volume('jwt-1');
    const s = await stub([ok(LOCK_VIEW)]);
    const warnings: string[] = [];
    const c = client(s.url, {
      apiKey: undefined, tokenFile: v.path, tokenRefreshMs: 0, logger: { warn: (m) => warnings.push(m) },
    });
    rmSync(join(v.dir, '..data'));
    await c.lock('L');
    await c.lock('L');
    v.rotate('jwt-2');
    await c.lock('L');
    assert.deepEqual(tokens(s), ['Bearer jwt-1', 'Bearer jwt-1', 'Bearer jwt-2']);
    assert.equal(warnings.length, 1);
    assert.ok(warnings[0]!.includes(v.path) && !warnings[0]!.includes('jwt-'), warnings[0]);
  });

  test('background heartbeats and the complete send the new token too', async () => {
    const v = volume('jwt-1');
    const s = await stub([], (hit) => (hit.path.endsWith('/complete') ? ok(RELEASED) : ok({ ...ACQUIRED, leaseMs: 600 })));
    await client(s.url, { apiKey: undefined, tokenFile: v.path, tokenRefreshMs: 0 }).run('L', async () => {
      v.rotate('jwt-2');
      await new Promise((resolve) => setTimeout(resolve, 700));
    }, { requestId: 'r' });
    const beats = s.hits.filter((h) => h.path.endsWith('/heartbeat'));
    assert.ok(beats.length >= 2, `${beats.length} heartbeats`);
    assert.equal(s.hits[0]!.headers.authorization, 'Bearer jwt-1');
    assert.deepEqual(new Set(beats.map((h) => h.headers.authorization)), new Set(['Bearer jwt-2']));
    assert.equal(s.hits.at(-1)!.headers.authorization, 'Bearer jwt-2');
    assert.ok(s.hits.at(-1)!.path.endsWith('/complete'));
  });
});
