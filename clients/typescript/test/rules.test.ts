/**
 * The rules of clients/README.md ("The rules they all follow") that this round added or changed,
 * one describe per point of the round's task list, against tiny local HTTP stubs (never a stub of
 * Baton's logic): the README's first example, the run report and handledOwn, onSubmit, a
 * DUPLICATE_REQUEST after the client's own retry, the report of a failed run, the claim poller's
 * callbacks, report and stop, turns (attempt, live when returned), a wait that keeps its place,
 * the stranded-queue warning, the retry warning, lock lost told apart, and one-way imports.
 */
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import {
  BackendUnavailableError, BatonClient, BatonClientOptions, DuplicateRequestError, HandlerError, InvalidRequestError,
  LockLostError, Submitted, TransportError, UnexpectedResponseError, WaitTimeoutError, parseOutcome,
} from '@baton/client';
import { Hit, Reply, Stub, ok, problem, rejects } from './stub.js';

const stubs: Stub[] = [];
after(async () => {
  await Promise.all(stubs.map((s) => s.close()));
});

async function stub(route: (hit: Hit) => Reply): Promise<Stub> {
  const s = await new Stub([], route).start();
  stubs.push(s);
  return s;
}

const KEY = 'secret-key-4711';

/** A client whose warnings are collected in `warnings`. */
function client(url: string, warnings: string[] = [], options: Partial<BatonClientOptions> = {}): BatonClient {
  return new BatonClient({ url, apiKey: KEY, logger: { warn: (m) => warnings.push(m) }, ...options });
}


/** Resolves once `predicate` holds (checked every 10 ms); fails the test after `ms`. */
async function until(predicate: () => boolean, ms = 5000): Promise<void> {
  const end = performance.now() + ms;
  while (!predicate()) {
    if (performance.now() > end) assert.fail('the awaited event did not happen');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const kind = (h: Hit): string => `${h.method} ${h.path.split('?')[0]!.split('/').slice(3).join('/') || h.path}`;
const ACQUIRED = { status: 'ACQUIRED', lcid: 'L', requestId: 'r', token: 't', fence: 7, leaseMs: 30000, expiresAt: 'x' };
const RELEASED = { status: 'RELEASED', lcid: 'L', pending: 0 };
const QUEUED = { status: 'QUEUED', lcid: 'L', requestId: 'w', position: 2, queueLength: 2 };
const next = (...ids: string[]): Record<string, unknown> => ({
  status: 'NEXT', lcid: 'L', token: 't', fence: 9, leaseMs: 30000, expiresAt: 'x',
  request: { requestId: ids[0], attempt: 1 }, requests: ids.map((requestId) => ({ requestId, attempt: 1 })),
});
const view = (held: boolean, queueLength: number): Record<string, unknown> => ({
  lcid: 'L', held, fence: 3, activeRequestId: held ? 'h' : null, leaseRemainingMs: held ? 1000 : 0, queueLength,
});

// ------------------------------------------------------------------ 1. who rescues what

describe('1. who rescues what', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

  test('the README starts with a claim poller running next to run, and links who rescues what', () => {
    const first = /```ts\n([\s\S]*?)```/.exec(readme);
    assert.ok(first, 'a first ts example');
    const code = first[1]!;
    assert.ok(readme.indexOf(first[0]) < readme.indexOf('\n## '), 'before the first section');
    assert.ok(code.split('\n').length <= 16, `${code.split('\n').length} lines`);
    assert.match(code, /client\.runClaims\(/);
    assert.match(code, /client\.run\(/);
    assert.ok(code.indexOf('runClaims(') < code.indexOf('client.run('), 'the poller starts first');
    const intro = readme.slice(0, readme.indexOf('\n## '));
    assert.match(intro, /\.\.\/\.\.\/docs\/claims-and-dead-letters\.md#who-rescues-what/);
  });

  test('no doc says that RELEASED means done, or that the service tries a failed request again', () => {
    const dist = new URL('../', import.meta.url);
    const docs = [readme, ...readdirSync(dist).filter((f) => f.endsWith('.d.ts')).map((f) => readFileSync(new URL(f, dist), 'utf8'))];
    for (const text of docs) {
      assert.doesNotMatch(text, /service (will )?(tries|try|retries|retry) it again/i);
      assert.doesNotMatch(text, /RELEASED[^.]*\b(means|meaning)\b[^.]*\b(done|finished|completed)\b(?![^.]*\bnot\b)/);
      assert.doesNotMatch(text, /the request will be redelivered/i);
    }
    const clientDts = readFileSync(new URL('client.d.ts', dist), 'utf8');
    const lockAllDoc = clientDts.slice(clientDts.lastIndexOf('/**', clientDts.indexOf('lockAll<T>(')), clientDts.indexOf('lockAll<T>('));
    assert.match(lockAllDoc, /claim poller/, 'lockAll says that handoff requests on its lcids need a claim poller');
  });
});

// ------------------------------------------------------------------ 2. the run report

describe('2. the run report and handledOwn', () => {
  test('RELEASED after a wait request took the lock: handled is the other work, handledOwn false', async () => {
    const s = await stub((hit) => (hit.path.endsWith('/acquire') ? ok(next('h1'))
      : ok({ ...RELEASED, pending: 1, passedTo: 'w1' })));
    const seen: string[] = [];
    const report = await client(s.url).run('L', (work) => {
      seen.push(work.requestId);
    }, { requestId: 'r2' });
    assert.deepEqual(seen, ['h1']);
    assert.deepEqual(report, {
      status: 'RELEASED', lcid: 'L', requestId: 'r2', handled: ['h1'], handledOwn: false,
      released: { status: 'RELEASED', lcid: 'L', pending: 1, passedTo: 'w1' },
    });
  });

  test('handledOwn is true when the own request was handled, also for a generated requestId', async () => {
    const s = await stub((hit) => (hit.path.endsWith('/acquire')
      ? ok({ ...ACQUIRED, requestId: (JSON.parse(hit.body) as { requestId: string }).requestId }) : ok(RELEASED)));
    const report = await client(s.url).run('L', () => 'done');
    assert.match(report.requestId, /^[0-9a-f]{32}$/);
    assert.deepEqual(report.handled, [report.requestId]);
    assert.equal(report.handledOwn, true);
    assert.equal(report.status, 'RELEASED');
  });
});

// ------------------------------------------------------------------ 3. onSubmit

describe('3. onSubmit', () => {
  test('called once, before the handler, with lcid, requestId and the outcome (ACQUIRED, NEXT, QUEUED)', async () => {
    for (const [answer, status] of [[ok({ ...ACQUIRED, requestId: 'r' }), 'ACQUIRED'], [ok(next('h')), 'NEXT'],
      [ok({ ...QUEUED, requestId: 'r' }, 202), 'QUEUED']] as const) {
      const s = await stub((hit) => (hit.path.endsWith('/acquire') ? answer : ok(RELEASED)));
      const events: string[] = [];
      const calls: Submitted[] = [];
      await client(s.url).run('L', (work) => {
        events.push(`handler ${work.requestId}`);
      }, {
        requestId: 'r', onSubmit: (submitted) => {
          calls.push(submitted);
          events.push('submitted');
        },
      });
      assert.equal(calls.length, 1, status);
      assert.deepEqual([calls[0]!.lcid, calls[0]!.requestId, calls[0]!.outcome?.status], ['L', 'r', status]);
      assert.equal(events[0], 'submitted', 'before any handler');
      assert.equal(events.length, status === 'QUEUED' ? 1 : 2);
    }
  });

  test('an async onSubmit is awaited before the handler runs', async () => {
    const s = await stub((hit) => (hit.path.endsWith('/acquire') ? ok({ ...ACQUIRED, requestId: 'r' }) : ok(RELEASED)));
    let journaled = false;
    let seenByHandler: boolean | undefined;
    await client(s.url).run('L', () => {
      seenByHandler = journaled;
    }, {
      requestId: 'r', onSubmit: async () => {
        await new Promise((resolve) => setTimeout(resolve, 30));
        journaled = true;
      },
    });
    assert.equal(seenByHandler, true);
  });

  test('an onSubmit that throws: the lock in hand is given back (abort with requeue) and run rejects with its error', async () => {
    const s = await stub((hit) => (hit.path.endsWith('/acquire') ? ok({ ...ACQUIRED, requestId: 'r' }) : ok(RELEASED)));
    const journal = new Error('journal full');
    let ran = false;
    const error = await rejects(client(s.url).run('L', () => {
      ran = true;
    }, {
      requestId: 'r', onSubmit: () => {
        throw journal;
      },
    }), Error);
    assert.equal(error, journal);
    assert.equal(ran, false);
    assert.deepEqual(s.hits.map(kind), ['POST L/acquire', 'POST L/abort']);
    assert.deepEqual(JSON.parse(s.hits[1]!.body), { requestId: 'r', token: 't', requeue: true, reason: 'journal full' });
    assert.deepEqual((error as { report?: unknown }).report,
      { status: 'FAILED', lcid: 'L', requestId: 'r', handled: [], handledOwn: false });
  });
});

// ------------------------------------------------------------------ 4. duplicate after own retry

describe('4. DUPLICATE_REQUEST after the client\'s own retry', () => {
  test('ACTIVE or DONE after a retried acquire: QUEUED, no position, handledOwn false, onSubmit without outcome', async () => {
    for (const state of ['ACTIVE', 'DONE']) {
      let n = 0;
      const s = await stub(() => (n++ === 0 ? problem(503, 'BACKEND_UNAVAILABLE')
        : problem(409, 'DUPLICATE_REQUEST', { state, attempt: 1 })));
      const calls: Submitted[] = [];
      const report = await client(s.url).run('L', () => assert.fail('never runs'), {
        requestId: 'r', onSubmit: (submitted) => {
          calls.push(submitted);
        },
      });
      assert.deepEqual(report, { status: 'QUEUED', lcid: 'L', requestId: 'r', handled: [], handledOwn: false }, state);
      assert.ok(!('position' in report));
      assert.deepEqual(calls, [{ lcid: 'L', requestId: 'r', outcome: undefined }]);
      assert.equal(s.hits.length, 2);
    }
  });

  test('on a first send, or in another state, it is raised and onSubmit is not called', async () => {
    const first = await stub(() => problem(409, 'DUPLICATE_REQUEST', { state: 'DONE', attempt: 1 }));
    let called = 0;
    const onSubmit = (): void => {
      called++;
    };
    const error = await rejects(client(first.url).run('L', () => undefined, { requestId: 'r', onSubmit }), DuplicateRequestError);
    assert.equal(error.attempts, 1);
    assert.equal(error.report?.status, 'FAILED');
    let n = 0;
    const aborted = await stub(() => (n++ === 0 ? problem(503, 'BACKEND_UNAVAILABLE')
      : problem(409, 'DUPLICATE_REQUEST', { state: 'ABORTED', attempt: 1 })));
    await rejects(client(aborted.url).run('L', () => undefined, { requestId: 'r', onSubmit }), DuplicateRequestError);
    assert.equal(called, 0);
  });
});

// ------------------------------------------------------------------ 5. a failed run keeps its report

describe('5. a failed run keeps its report', () => {
  /** acquire: NEXT a; complete of a: NEXT b; complete of b: `second`. */
  async function twoStep(second: Reply): Promise<Stub> {
    return stub((hit) => {
      if (hit.path.endsWith('/acquire')) return ok(next('a'));
      if (hit.path.endsWith('/complete')) return (JSON.parse(hit.body) as { requestId: string }).requestId === 'a' ? ok(next('b')) : second;
      return ok(RELEASED);
    });
  }

  test('the handler\'s error carries what was handled until then', async () => {
    const s = await twoStep(ok(RELEASED));
    const error = await rejects(client(s.url).run('L', (work) => {
      if (work.requestId === 'b') throw new Error('boom on b');
    }, { requestId: 'b' }), HandlerError);
    assert.deepEqual(error.report, { status: 'FAILED', lcid: 'L', requestId: 'b', handled: ['a'], handledOwn: false });
    assert.deepEqual(error.handled, ['a']);
  });

  test('lock lost carries it', async () => {
    const s = await twoStep(problem(409, 'LOCK_LOST'));
    const error = await rejects(client(s.url).run('L', () => undefined, { requestId: 'a' }), LockLostError);
    assert.deepEqual(error.report, { status: 'FAILED', lcid: 'L', requestId: 'a', handled: ['a'], handledOwn: true });
  });

  test('a call that failed after its retries carries it', async () => {
    const s = await twoStep(problem(503, 'BACKEND_UNAVAILABLE'));
    const error = await rejects(client(s.url, [], { deadlineMs: 300 }).run('L', () => undefined, { requestId: 'x' }),
      BackendUnavailableError);
    assert.deepEqual(error.report, { status: 'FAILED', lcid: 'L', requestId: 'x', handled: ['a'], handledOwn: false });
    const refused = await stub(() => problem(400, 'INVALID_REQUEST', { field: 'leaseMs' }));
    const early = await rejects(client(refused.url).run('L', () => undefined, { requestId: 'y', leaseMs: 1 }), InvalidRequestError);
    assert.deepEqual(early.report, { status: 'FAILED', lcid: 'L', requestId: 'y', handled: [], handledOwn: false });
  });

  test('a run cancelled by its signal rejects with the signal\'s reason, which carries it', async () => {
    const s = await twoStep(ok(RELEASED));
    const stop = new AbortController();
    const reason = new Error('shutting down');
    const error = await rejects(client(s.url).run('L', (work) => {
      if (work.requestId === 'b') stop.abort(reason);
    }, { requestId: 'b', signal: stop.signal }), Error);
    assert.equal(error, reason);
    assert.deepEqual((error as { report?: unknown }).report,
      { status: 'FAILED', lcid: 'L', requestId: 'b', handled: ['a'], handledOwn: false });
    assert.deepEqual(s.hits.map(kind).at(-1), 'POST L/abort', 'the work in hand was given back');
  });

  test('HandlerError.abortError: undefined when the requeue abort succeeded, its error when it failed', async () => {
    const good = await stub((hit) => (hit.path.endsWith('/acquire') ? ok({ ...ACQUIRED, requestId: 'r' }) : ok(RELEASED)));
    const fine = await rejects(client(good.url).run('L', () => {
      throw new Error('x');
    }, { requestId: 'r' }), HandlerError);
    assert.equal(fine.abortError, undefined);
    const bad = await stub((hit) => (hit.path.endsWith('/acquire') ? ok({ ...ACQUIRED, requestId: 'r' })
      : problem(400, 'INVALID_REQUEST', { field: 'reason' })));
    const failed = await rejects(client(bad.url).run('L', () => {
      throw new Error('x');
    }, { requestId: 'r' }), HandlerError);
    assert.ok(failed.abortError instanceof InvalidRequestError, String(failed.abortError));
  });
});

// ------------------------------------------------------------------ 6. the claim poller

describe('6. the claim poller', () => {
  test('onError gets every handler error and failed claim; the report counts claims, handled and failed', async () => {
    let claims = 0;
    const s = await stub((hit) => {
      if (hit.path === '/v1/claims') {
        claims++;
        if (claims === 1) return ok({ ...next('o1'), lcid: 'p-1' });
        if (claims === 2) return ok({ ...next('o2'), lcid: 'p-2' });
        if (claims === 3) return problem(400, 'INVALID_REQUEST', { field: 'lcidPrefix' });
        return { status: 204 };
      }
      return ok(RELEASED);
    });
    const stop = new AbortController();
    const errors: unknown[] = [];
    const seen: (string | null)[] = [];
    const warnings: string[] = [];
    const report = await client(s.url, warnings).runClaims((work) => {
      if (work.requestId === 'o2') throw new Error('bad o2');
    }, {
      lcidPrefix: 'p-', signal: stop.signal,
      onError: (error) => errors.push(error),
      onClaim: (claimed) => {
        seen.push(claimed && claimed.request.requestId);
        if (claimed === null) stop.abort();
      },
    });
    assert.deepEqual(report, { claims: 2, handled: 1, failed: 2 });
    assert.deepEqual(seen, ['o1', 'o2', null]);
    assert.ok(errors[0] instanceof HandlerError);
    assert.ok(errors[1] instanceof InvalidRequestError);
    assert.deepEqual(warnings, [], 'onError replaces the default warning');
  });

  test('without onError every failure is a warning in the client\'s log', async () => {
    let claims = 0;
    const s = await stub(() => (++claims === 1 ? problem(400, 'INVALID_REQUEST', { field: 'lcidPrefix' }) : { status: 204 }));
    const stop = new AbortController();
    const warnings: string[] = [];
    const report = await client(s.url, warnings).runClaims(() => undefined, {
      signal: stop.signal, onClaim: () => stop.abort(),
    });
    assert.deepEqual(report, { claims: 0, handled: 0, failed: 1 });
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /^baton: claim poller: 400 INVALID_REQUEST/);
  });

  test('stopping ends a claim in flight at once, its retries included', async () => {
    const outage = await stub(() => problem(503, 'BACKEND_UNAVAILABLE'));
    const hang = await stub(() => ({ status: 200, hang: true }));
    for (const s of [outage, hang]) {
      const stop = new AbortController();
      const errors: unknown[] = [];
      const poller = client(s.url).runClaims(() => assert.fail('no work'), { signal: stop.signal, onError: (e) => errors.push(e) });
      await until(() => s.hits.length >= 1);
      const stoppedAt = performance.now();
      stop.abort();
      const report = await poller;
      assert.ok(performance.now() - stoppedAt < 1000, `stopped after ${Math.round(performance.now() - stoppedAt)} ms, `
        + 'not after the 30 s retry deadline or the 10 s attempt timeout');
      assert.deepEqual(report, { claims: 0, handled: 0, failed: 0 }, 'a stop is not a failure');
      assert.deepEqual(errors, []);
    }
  });
});

// ------------------------------------------------------------------ 7. turns

describe('7. turns: attempt, and live when returned', () => {
  test('ACQUIRED carries attempt, 1 when absent; so do the Work of run and the Turn', async () => {
    const withAttempt = parseOutcome({ ...ACQUIRED, attempt: 3 });
    assert.equal(withAttempt.status === 'ACQUIRED' && withAttempt.attempt, 3);
    const without = parseOutcome(ACQUIRED);
    assert.equal(without.status === 'ACQUIRED' && without.attempt, 1);
    const s = await stub((hit) => (hit.path.endsWith('/acquire')
      ? ok({ ...ACQUIRED, requestId: (JSON.parse(hit.body) as { requestId: string }).requestId, attempt: 2 }) : ok(RELEASED)));
    const c = client(s.url);
    let attempt = 0;
    await c.run('L', (work) => {
      attempt = work.attempt;
    }, { requestId: 'r' });
    assert.equal(attempt, 2);
    const turn = await c.awaitTurn('L', 'w');
    assert.equal(turn.attempt, 2);
    await turn.complete();
  });

  test('a turn picked up after a long hold is renewed with a heartbeat before it is returned', async () => {
    const s = await stub((hit) => {
      if (hit.path.endsWith('/acquire')) return { ...ok({ ...ACQUIRED, requestId: 'w', leaseMs: 600 }), delayMs: 400 };
      if (hit.path.endsWith('/heartbeat')) return ok({ ...ACQUIRED, requestId: 'w', leaseMs: 600 });
      return ok(RELEASED);
    });
    const turn = await client(s.url).awaitTurn('L', 'w');
    assert.deepEqual(s.hits.map(kind), ['POST L/acquire', 'POST L/heartbeat'], 'renewed before it was returned');
    // Counted from the heartbeat: later than the acquire's send + lease, which was nearly spent.
    assert.ok(turn.deadline > s.hits[0]!.at + 600 + 200, `deadline ${turn.deadline - s.hits[0]!.at} ms after the acquire`);
    assert.ok(turn.deadline <= s.hits[1]!.at + 600);
    await turn.complete();
    const quick = await stub((hit) => (hit.path.endsWith('/acquire') ? ok({ ...ACQUIRED, requestId: 'w', leaseMs: 600 }) : ok(RELEASED)));
    const fresh = await client(quick.url).awaitTurn('L', 'w');
    assert.deepEqual(quick.hits.map(kind), ['POST L/acquire'], 'a fresh turn needs no heartbeat');
    await fresh.complete();
  });

  test('the lease counts from the first attempt of the call, also when a retry got the answer', async () => {
    // The first attempt may have picked the turn up (a 503 does not say); the retry is answered at once.
    for (const mode of ['turn', 'run'] as const) {
      let acquires = 0;
      const s = await stub((hit) => {
        if (hit.path.endsWith('/acquire')) {
          return ++acquires === 1 ? { ...problem(503, 'BACKEND_UNAVAILABLE'), delayMs: 400 }
            : ok({ ...ACQUIRED, requestId: 'w', leaseMs: 900 });
        }
        if (hit.path.endsWith('/heartbeat')) return ok({ ...ACQUIRED, requestId: 'w', leaseMs: 900 });
        return ok(RELEASED);
      });
      const c = client(s.url);
      if (mode === 'turn') {
        await (await c.awaitTurn('L', 'w')).complete();
      } else {
        await c.run('L', () => {
          assert.deepEqual(s.hits.map(kind), ['POST L/acquire', 'POST L/acquire', 'POST L/heartbeat'], 'renewed before the handler');
        }, { requestId: 'w' });
      }
      assert.deepEqual(s.hits.map(kind).slice(0, 3), ['POST L/acquire', 'POST L/acquire', 'POST L/heartbeat'], mode);
    }
  });

  test('LOCK_LOST at that heartbeat is lock lost, and the wait request is not withdrawn', async () => {
    const s = await stub((hit) => {
      if (hit.path.endsWith('/acquire')) return { ...ok({ ...ACQUIRED, requestId: 'w', leaseMs: 600 }), delayMs: 400 };
      if (hit.path.endsWith('/heartbeat')) return problem(409, 'LOCK_LOST');
      return ok(RELEASED);
    });
    const error = await rejects(client(s.url).awaitTurn('L', 'w'), LockLostError);
    assert.equal(error.byClient, false);
    assert.deepEqual(s.hits.map(kind), ['POST L/acquire', 'POST L/heartbeat']);
  });
});

// ------------------------------------------------------------------ 8. a wait keeps its place

describe('8. a wait keeps its place unless the caller gives up', () => {
  test('a call failed past its retry deadline, or an unexpected answer, is thrown without withdrawing', async () => {
    const down = await stub(() => problem(503, 'BACKEND_UNAVAILABLE'));
    // A long-poll's retry budget is its deadline + waitMs + 5 s: a short wait keeps this test short.
    await rejects(client(down.url, [], { deadlineMs: 100 }).awaitTurn('L', 'w', { timeoutMs: 100 }), BackendUnavailableError);
    assert.ok(down.hits.length > 1);
    assert.ok(down.hits.every((h) => h.path.endsWith('/acquire')), 'never withdrawn');
    const odd = await stub(() => ok(next('h')));
    await rejects(client(odd.url).awaitTurn('L', 'w'), UnexpectedResponseError);
    assert.deepEqual(odd.hits.map(kind), ['POST L/acquire']);
  });

  test('its signal is the caller giving up: the request is withdrawn', async () => {
    const s = await stub((hit) => (hit.path.endsWith('/acquire') ? { status: 200, hang: true } : ok(RELEASED)));
    const stop = new AbortController();
    const waiting = client(s.url).awaitTurn('L', 'w', { signal: stop.signal });
    await until(() => s.hits.length === 1);
    stop.abort();
    await rejects(waiting, TransportError);
    assert.deepEqual(s.hits.map(kind), ['POST L/acquire', 'POST L/abort']);
    assert.deepEqual(JSON.parse(s.hits[1]!.body), { requestId: 'w', reason: 'the waiter gave up' });
  });

  test('so is its timeout', async () => {
    const s = await stub((hit) => (hit.path.endsWith('/acquire') ? { ...ok(QUEUED, 202), delayMs: 50 }
      : hit.method === 'GET' ? ok(view(true, 1)) : ok(RELEASED)));
    await rejects(client(s.url).awaitTurn('L', 'w', { timeoutMs: 300 }), WaitTimeoutError);
    assert.equal(kind(s.hits.at(-1)!), 'POST L/abort');
  });

  test('lockAll gives up as a whole on a failure: it withdraws the turn it waits for and aborts the one it holds', async () => {
    const s = await stub((hit) => {
      const lcid = hit.path.split('/')[3]!;
      if (hit.path.endsWith('/acquire')) {
        return lcid === 'x' ? ok({ ...ACQUIRED, lcid: 'x', requestId: (JSON.parse(hit.body) as { requestId: string }).requestId })
          : ok({ ...next('h'), lcid: 'y' }); // a failure of the call, not a give-up
      }
      return ok({ ...RELEASED, lcid });
    });
    await rejects(client(s.url).lockAll(['y', 'x'], () => assert.fail('never runs')), UnexpectedResponseError);
    const after = s.hits.filter((h) => !h.path.endsWith('/acquire'));
    assert.deepEqual(after.map((h) => [kind(h), 'token' in JSON.parse(h.body)]), [['POST y/abort', false], ['POST x/abort', true]]);
  });
});

// ------------------------------------------------------------------ 9. stranded-queue warning

describe('9. work nobody holds is reported while waiting', () => {
  async function wait(views: Record<string, unknown>[], polls: number): Promise<{ warnings: string[]; reads: number }> {
    let acquires = 0;
    let reads = 0;
    const s = await stub((hit) => {
      if (hit.path.endsWith('/acquire')) return ++acquires <= polls ? ok(QUEUED, 202) : ok({ ...ACQUIRED, requestId: 'w' });
      if (hit.method === 'GET') return ok(views[reads++ % views.length]!);
      return ok(RELEASED);
    });
    const warnings: string[] = [];
    const turn = await client(s.url, warnings).awaitTurn('L', 'w');
    await turn.complete();
    return { warnings, reads };
  }

  test('two reads in a row with no holder and requests queued: one warning for the wait, naming the lcid', async () => {
    const { warnings, reads } = await wait([view(false, 2)], 5);
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(warnings[0]!, /^baton: L has no holder and 2 request\(s\) queued while w waits/);
    assert.match(warnings[0]!, /claims-and-dead-letters\.md#who-rescues-what/);
    assert.equal(reads, 2, 'no more reads once warned');
  });

  test('a holder seen in between starts the count again; no warning', async () => {
    const { warnings, reads } = await wait([view(false, 2), view(true, 2)], 6);
    assert.deepEqual(warnings, []);
    assert.equal(reads, 6, 'a lock view read after every QUEUED long-poll');
  });
});

// ------------------------------------------------------------------ 10. retry warning

describe('10. retrying is not silent', () => {
  test('one warning per call after its third failed attempt: method, path, host:port, last error, never the key', async () => {
    let n = 0;
    const s = await stub(() => (n++ < 4 ? problem(503, 'BACKEND_UNAVAILABLE') : ok(view(false, 0))));
    const warnings: string[] = [];
    const c = client(s.url, warnings, { backoffBaseMs: 1 });
    await c.lock('L');
    assert.equal(s.hits.length, 5);
    assert.equal(warnings.length, 1, warnings.join('\n'));
    const address = s.url.replace('http://', '');
    assert.match(warnings[0]!, new RegExp(`^baton: GET /v1/locks/L to ${address} failed 3 times, the last: 503 BACKEND_UNAVAILABLE`));
    assert.match(warnings[0]!, /retrying until its deadline/);
    assert.ok(!warnings[0]!.includes(KEY));
    n = 2; // two more failures, then an answer: no warning
    await c.lock('L');
    assert.equal(warnings.length, 1);
  });

  test('a transport error names the host and port it could not reach', async () => {
    const s = await stub(() => ok({}));
    const url = s.url;
    await s.close();
    stubs.splice(stubs.indexOf(s), 1);
    const warnings: string[] = [];
    const error = await rejects(client(url, warnings, { deadlineMs: 1500, backoffBaseMs: 1 }).lock('L'), TransportError);
    const address = url.replace('http://', '');
    assert.equal(error.address, address);
    assert.ok(error.message.endsWith(`connection refused: ${address}`), error.message);
    assert.equal(warnings.length, 1);
    assert.ok(warnings[0]!.includes(`connection refused: ${address}`), warnings[0]);
  });
});

// ------------------------------------------------------------------ 11. lock lost, told apart

describe('11. lock lost: who decided', () => {
  async function lost(heartbeat: Reply): Promise<{ error: LockLostError; warnings: string[] }> {
    const s = await stub((hit) => (hit.path.endsWith('/acquire') ? ok({ ...ACQUIRED, requestId: 'r', leaseMs: 600 }) : heartbeat));
    const warnings: string[] = [];
    const error = await rejects(client(s.url, warnings).run('L', async (work) => {
      await new Promise((resolve) => work.signal.addEventListener('abort', resolve));
      work.check();
    }, { requestId: 'r' }), LockLostError);
    return { error, warnings: warnings.filter((w) => w.includes('lock lost')) };
  }

  test('the service: 409 LOCK_LOST, its problem, and the log line says the service answered', async () => {
    const { error, warnings } = await lost(problem(409, 'LOCK_LOST', { detail: 'not the holder' }));
    assert.equal(error.byClient, false);
    assert.equal(error.status, 409);
    assert.equal(error.body.type, 'urn:baton:problem:lock-lost');
    assert.deepEqual(warnings, [
      'baton: lock lost on L: the service answered 409 LOCK_LOST (not the holder); the handler is cancelled and nothing is completed for it',
    ]);
  });

  test('the client: its own deadline passed with no renewal; no HTTP status, and the message and log line say so', async () => {
    const { error, warnings } = await lost(problem(503, 'BACKEND_UNAVAILABLE'));
    assert.equal(error.byClient, true);
    assert.equal(error.status, undefined);
    assert.equal(error.code, 'LOCK_LOST');
    assert.match(error.message, /^lock lost on L: the client's own lease deadline passed with no renewal .*decided by the client/);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /^baton: lock lost on L, decided by this client: its own lease deadline passed with no renewal/);
  });
});

// ------------------------------------------------------------------ 12. one-way imports

describe('12. one-way imports', () => {
  test('http <- retries <- calls <- holder / wait / claims <- client, and no file imports one to its right', () => {
    // The leaves (errors, outcomes, tracing) import no part. Same rank: no import either way.
    const rank: Record<string, number> = {
      tracing: 0, outcomes: 1, errors: 2, http: 3, retries: 4, calls: 5, holder: 6, wait: 7, claims: 7, client: 8, index: 9,
    };
    const src = new URL('../../src/', import.meta.url);
    const files = readdirSync(src).filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3));
    assert.deepEqual(files.filter((f) => !(f in rank)), [], 'every file has its place in the order');
    const wrong: string[] = [];
    for (const file of files) {
      const text = readFileSync(new URL(`${file}.ts`, src), 'utf8');
      for (const match of text.matchAll(/\bfrom '\.\/([\w-]+)\.js'/g)) {
        const target = match[1]!;
        if (!(rank[target]! < rank[file]!)) wrong.push(`${file} imports ${target}`);
      }
    }
    assert.deepEqual(wrong, []);
  });
});
