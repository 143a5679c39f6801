/**
 * The conformance scenarios of clients/conformance/scenarios.md, one test per id, against the
 * real packaged service and redis-server that clients/conformance/harness starts (run them with
 * `clients/conformance/run typescript`). Skipped when BATON_URL is not set, except
 * proxy_502_is_typed_error, which needs only a local HTTP server. Nothing here assumes that keys are
 * checked: the whole suite also passes against a service with authentication off
 * (auth_off_ignores_keys: `clients/conformance/run typescript --auth-off`). Every scenario that
 * runs a claim poller gives it an lcid prefix of its own, so that pollers never take another
 * scenario's work. trace_context_travels is this
 * client's own check (not a scenario of scenarios.md): a submitted trace context comes back on
 * NEXT and the request view, and the holder's baton.work span links to it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  BatonClient, BatonClientOptions, HandlerError, LockAllWork, LockLostError, NotFoundError, RequestView, Submitted,
  UnexpectedResponseError, Work, WorkItem,
} from '@baton/client';

const URL_ = process.env.BATON_URL;
const KEY = process.env.BATON_API_KEY;
const HARNESS = process.env.BATON_HARNESS;
const HARNESS_DIR = process.env.BATON_HARNESS_DIR;
const RUN = `ts-${randomBytes(5).toString('hex')}`;
const SKIP = URL_ ? false : 'BATON_URL not set: run through clients/conformance/run typescript';

const now = (): number => performance.now();
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function prefix(id: string): string {
  return `${RUN}-${id}-`;
}

function client(options: Partial<BatonClientOptions> = {}): BatonClient {
  assert.ok(URL_);
  return new BatonClient({ url: URL_, apiKey: KEY, logger: null, ...options });
}

/** Runs a disruption of the harness; resolves with its exit code once it is done. */
function harness(...args: string[]): Promise<number | null> {
  assert.ok(HARNESS && HARNESS_DIR, 'BATON_HARNESS and BATON_HARNESS_DIR');
  const child = spawn(HARNESS, [args[0]!, HARNESS_DIR, ...args.slice(1)], { stdio: ['ignore', 'inherit', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => resolve(code));
  });
}

/** Polls `predicate` until it holds or `timeoutMs` passed; resolves with its last value. */
async function until(predicate: () => boolean | Promise<boolean>, timeoutMs: number, intervalMs = 50): Promise<boolean> {
  const deadline = now() + timeoutMs;
  while (now() < deadline) {
    if (await predicate()) return true;
    await sleep(intervalMs);
  }
  return predicate();
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
}

function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** `promise`, or a rejection after `ms` (a hang fails the test instead of blocking it). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
    }),
  ]);
}

/** A background task: never an unhandled rejection; `outcome()` gives its value or rethrows its error. */
class Task<T> {
  private settled: Promise<{ ok: true; value: T } | { ok: false; error: unknown }>;
  done = false;

  constructor(promise: Promise<T>) {
    this.settled = promise.then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    ).finally(() => {
      this.done = true;
    });
  }

  async outcome(ms = 60000): Promise<T> {
    const result = await within(this.settled, ms, 'background task');
    if (!result.ok) throw result.error;
    return result.value;
  }

  async error(ms = 60000): Promise<unknown> {
    const result = await within(this.settled, ms, 'background task');
    if (result.ok) assert.fail(`expected an error, got ${JSON.stringify(result.value)}`);
    return result.error;
  }
}

async function stateOf(c: BatonClient, lcid: string, requestId: string): Promise<string | null> {
  try {
    return (await c.request(lcid, requestId)).state;
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    throw error;
  }
}

async function assertDone(c: BatonClient, lcid: string, requestId: string, timeoutMs = 15000): Promise<RequestView> {
  const view = await c.awaitResult(lcid, requestId, { timeoutMs });
  assert.equal(view.state, 'DONE', `${requestId}: ${JSON.stringify(view)}`);
  return view;
}

/** Resolves true when `signal` aborts, false after `ms`. */
function aborted(signal: AbortSignal, ms: number): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(true);
    }, { once: true });
  });
}

// ------------------------------------------------------------------ fifo_handoff

test('fifo_handoff', { skip: SKIP, timeout: 120000 }, async () => {
  const [h1, h2, h3] = [client(), client(), client()];
  const L = `${prefix('fifo_handoff')}L`;
  const seen: [string, number][] = [];
  const entered = deferred();
  const release = deferred();
  const others: string[] = [];
  const t = new Task(h1.run(L, async (work: Work) => {
    seen.push([work.requestId, work.fence]);
    entered.resolve();
    if (work.requestId === 'r1') await within(release.promise, 20000, 'release');
    return { by: 'h1', rid: work.requestId };
  }, { requestId: 'r1' }));
  await within(entered.promise, 10000, 'H1 in its handler');
  const never = (work: Work): void => {
    others.push(work.requestId);
  };
  for (const [c, rid] of [[h2, 'r2'], [h2, 'r3'], [h3, 'r4'], [h3, 'r5']] as const) {
    const report = await c.run(L, never, { requestId: rid });
    assert.equal(report.status, 'QUEUED', rid);
  }
  release.resolve();
  const report = await t.outcome();
  assert.equal(report.status, 'RELEASED');
  const all = ['r1', 'r2', 'r3', 'r4', 'r5'];
  assert.deepEqual(report.handled, all);
  assert.deepEqual(seen.map(([rid]) => rid), all);
  const fences = seen.map(([, f]) => f);
  for (let i = 1; i < fences.length; i++) assert.ok(fences[i]! > fences[i - 1]!, `fences strictly increase: ${fences}`);
  assert.deepEqual(others, []);
  for (const rid of all) assert.deepEqual((await assertDone(h1, L, rid)).result, { by: 'h1', rid });
});

// ------------------------------------------------------------------ long_handler_keeps_lock

test('long_handler_keeps_lock', { skip: SKIP, timeout: 60000 }, async () => {
  const [c, viewer] = [client(), client()];
  const L = `${prefix('long_handler_keeps_lock')}L`;
  const views: { held: boolean; fence: number | null }[] = [];
  const report = await c.run(L, async (work) => {
    const end = now() + 3000;
    while (now() < end) {
      views.push(await viewer.lock(L));
      await sleep(200);
    }
    work.check();
    return 'ok';
  }, { requestId: 'r1', leaseMs: 1000 });
  assert.deepEqual(report.handled, ['r1']);
  assert.ok(views.length > 5, `${views.length} views`);
  assert.ok(views.every((v) => v.held), JSON.stringify(views));
  assert.equal(new Set(views.map((v) => v.fence)).size, 1);
  assert.equal((await assertDone(c, L, 'r1')).attempt, 1);
});

// ------------------------------------------------------------------ throwing_handler_requeues

test('throwing_handler_requeues', { skip: SKIP, timeout: 60000 }, async () => {
  const [h1, other, h2] = [client(), client(), client()];
  const L = `${prefix('throwing_handler_requeues')}L`;
  const entered = deferred();
  const queued = deferred();
  const fence1: number[] = [];
  const message = `boom-${randomBytes(3).toString('hex')}`;
  const t = new Task(h1.run(L, async (work) => {
    fence1.push(work.fence);
    entered.resolve();
    await within(queued.promise, 10000, 'r2 queued');
    throw new Error(message);
  }, { requestId: 'r1' }));
  await within(entered.promise, 10000, 'H1 in its handler');
  assert.equal((await other.acquire(L, { requestId: 'r2' })).status, 'QUEUED');
  queued.resolve();
  const error = await t.error();
  assert.ok(error instanceof HandlerError, String(error));
  assert.equal((error.cause as Error).message, message);
  const view = await h2.request(L, 'r1');
  assert.deepEqual([view.state, view.position, view.attempt, view.reason], ['QUEUED', 1, 2, message]);

  const seen: [string, number, number][] = [];
  const report = await h2.run(L, (work) => {
    seen.push([work.requestId, work.attempt, work.fence]);
  }, { requestId: 'r3' });
  assert.equal(report.status, 'RELEASED');
  assert.deepEqual(seen.map(([r, a]) => [r, a]), [['r1', 2], ['r2', 1], ['r3', 1]]);
  assert.ok(seen[0]![2] > fence1[0]!, 'a higher fence than the failed holder');
  for (const rid of ['r1', 'r2', 'r3']) await assertDone(h2, L, rid);
});

// ------------------------------------------------------------------ sigkill_mid_handler

test('sigkill_mid_handler', { skip: SKIP, timeout: 60000 }, async () => {
  const c = client();
  const L = `${prefix('sigkill_mid_handler')}L`;
  const script = fileURLToPath(new URL('./killable-worker.js', import.meta.url));
  const worker = spawn(process.execPath, [script, L, 'victim'], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const lines = createInterface({ input: worker.stdout! });
    const line = await within(new Promise<string>((resolve) => lines.once('line', resolve)), 20000, 'the worker in its handler');
    assert.match(line, /^IN_HANDLER \d+ 1$/);
    const killedFence = Number(line.split(' ')[1]);
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.kill('SIGKILL');
    await within(exited, 10000, 'the worker gone');
    lines.close();
    assert.ok(await until(async () => !(await c.lock(L)).held, 10000), "the killed worker's lease ran out");

    const seen: [string, number, number][] = [];
    const report = await c.run(L, (work) => {
      seen.push([work.requestId, work.attempt, work.fence]);
    }, { requestId: 'own' });
    assert.deepEqual(report.handled, ['victim', 'own']);
    assert.deepEqual(seen.map(([r, a]) => [r, a]), [['victim', 2], ['own', 1]]);
    assert.ok(seen[0]![2] > killedFence, 'a higher fence than the killed worker');
    await assertDone(c, L, 'victim');
    await assertDone(c, L, 'own');
  } finally {
    if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
  }
});

// ------------------------------------------------------------------ disruptions

async function runThrough(id: string, disruption: string[]): Promise<void> {
  const lcids = ['a', 'b', 'c'].map((x) => `${prefix(id)}${x}`);
  // A 2-core machine that also runs other suites may take a while to restart the service: a
  // retry budget of a minute instead of the default 30 s.
  const clients = new Map(lcids.map((L) => [L, client({ deadlineMs: 60000 })]));
  const runs = new Map<string, number>();
  const handler = async (work: Work): Promise<void> => {
    for (const r of work.requests) runs.set(`${work.lcid}/${r.requestId}`, (runs.get(`${work.lcid}/${r.requestId}`) ?? 0) + 1);
    await sleep(50);
  };
  const tasks: [string, string, Task<unknown>][] = [];
  let disrupt: Promise<number | null> | undefined;
  for (let i = 0; i < 10; i++) {
    for (const L of lcids) {
      tasks.push([L, `r${i}`, new Task(clients.get(L)!.run(L, handler, { requestId: `r${i}`, leaseMs: 10000 }))]);
    }
    if (i === 2) disrupt = harness(...disruption);
    await sleep(250);
  }
  assert.equal(await within(disrupt!, 120000, disruption.join(' ')), 0);
  for (const [, , t] of tasks) await t.outcome(120000); // no error reaches the caller
  const viewer = client();
  for (const [L, rid] of tasks) await assertDone(viewer, L, rid, 30000);
  for (const [L, rid] of tasks) assert.equal(runs.get(`${L}/${rid}`), 1, `handler runs of ${L}/${rid}`);
}

test('redis_stop_mid_run', { skip: SKIP, timeout: 240000 }, async () => {
  await runThrough('redis_stop_mid_run', ['redis-stop', '3']);
});

test('service_restart_mid_run', { skip: SKIP, timeout: 240000 }, async () => {
  await runThrough('service_restart_mid_run', ['service-restart']);
});

// ------------------------------------------------------------------ lock_lost_cancels_handler

test('lock_lost_cancels_handler', { skip: SKIP, timeout: 90000 }, async () => {
  const c = client();
  const L = `${prefix('lock_lost_cancels_handler')}L`;
  const entered = deferred();
  const timing: { paused?: number; cancelled?: number } = {};
  const t = new Task(c.run(L, async (work) => {
    entered.resolve();
    if (await aborted(work.signal, 10000)) timing.cancelled = now();
    work.check();
  }, { requestId: 'r1', leaseMs: 1000 }));
  await within(entered.promise, 10000, 'in the handler');
  await sleep(100);
  timing.paused = now();
  const pause = harness('redis-pause', '3');
  const error = await t.error(30000);
  assert.ok(error instanceof LockLostError, String(error));
  assert.ok(timing.cancelled !== undefined, 'the handler was cancelled');
  assert.ok(timing.cancelled - timing.paused < 2000, `cancelled ${timing.cancelled - timing.paused} ms after the pause`);
  assert.equal(await within(pause, 30000, 'redis-pause'), 0);
  assert.notEqual(await stateOf(c, L, 'r1'), 'DONE', 'the client never completes a lost lock');

  assert.ok(await until(async () => !(await c.lock(L)).held, 10000));
  const seen: [string, number][] = [];
  await client().run(L, (work) => {
    seen.push([work.requestId, work.attempt]);
  }, { requestId: 'r2' });
  assert.deepEqual(seen, [['r1', 2], ['r2', 1]]);
});

// ------------------------------------------------------------------ batch_take_8

test('batch_take_8', { skip: SKIP, timeout: 60000 }, async () => {
  const [c, other] = [client(), client()];
  const L = `${prefix('batch_take_8')}L`;
  const entered = deferred();
  const release = deferred();
  const batches: [string[], number][] = [];
  const t = new Task(c.run(L, async (work) => {
    batches.push([work.requests.map((r) => r.requestId), work.fence]);
    entered.resolve();
    if (work.requestId === 'r0') await within(release.promise, 20000, 'release');
    if (work.requests.length === 1) return { one: work.requestId };
    return Object.fromEntries(work.requests.map((r) => [r.requestId, { n: r.requestId }]));
  }, { requestId: 'r0', take: 8 }));
  await within(entered.promise, 10000, 'in the handler');
  for (let i = 1; i <= 20; i++) assert.equal((await other.acquire(L, { requestId: `r${i}` })).status, 'QUEUED');
  release.resolve();
  const report = await t.outcome();
  const all = Array.from({ length: 21 }, (_, i) => `r${i}`);
  assert.deepEqual(batches.map(([b]) => b.length), [1, 8, 8, 4]);
  assert.deepEqual(batches.flatMap(([b]) => b), all);
  const fences = batches.map(([, f]) => f);
  for (let i = 1; i < fences.length; i++) assert.ok(fences[i]! > fences[i - 1]!, `one fence per batch, rising: ${fences}`);
  assert.deepEqual(report.handled, all);
  assert.deepEqual((await assertDone(c, L, 'r0')).result, { one: 'r0' });
  for (let i = 1; i <= 20; i++) assert.deepEqual((await assertDone(c, L, `r${i}`)).result, { n: `r${i}` });
});

// ------------------------------------------------------------------ wait_turn_and_result

test('wait_turn_and_result', { skip: SKIP, timeout: 60000 }, async () => {
  const [w1c, w2c, third] = [client(), client(), client()];
  const L = `${prefix('wait_turn_and_result')}L`;
  const w1 = await w1c.awaitTurn(L, 'w1', { timeoutMs: 10000 });
  const got: { at?: number; fence?: number } = {};
  const t2 = new Task((async () => {
    const turn = await w2c.awaitTurn(L, 'w2', { timeoutMs: 30000 });
    got.at = now();
    got.fence = turn.fence;
    return turn.complete({ answer: 42 });
  })());
  assert.ok(await until(async () => (await stateOf(w1c, L, 'w2')) === 'QUEUED', 10000), 'W2 waits');
  const t3 = new Task(third.awaitResult(L, 'w2', { timeoutMs: 30000 }));
  await sleep(500);
  assert.equal(got.at, undefined, 'W2 got its turn before W1 completed');
  const completedAt = now();
  const released = await w1.complete({ w1: true });
  assert.equal(released.status, 'RELEASED');
  assert.equal(released.status === 'RELEASED' && released.passedTo, 'w2');
  await t2.outcome(30000);
  assert.ok(got.at! > completedAt);
  assert.ok(got.fence! > w1.fence, 'a higher fence than W1');
  const view = await t3.outcome(30000);
  assert.deepEqual([view.state, view.result], ['DONE', { answer: 42 }]);
  assert.deepEqual((await assertDone(w1c, L, 'w1')).result, { w1: true });
});

// ------------------------------------------------------------------ claim_poller_rescues_orphan

test('claim_poller_rescues_orphan', { skip: SKIP, timeout: 60000 }, async () => {
  const raw = client();
  const L = `${prefix('claim_poller_rescues_orphan')}L`;
  assert.equal((await raw.acquire(L, { requestId: 'o1', leaseMs: 1000 })).status, 'ACQUIRED');
  assert.equal((await raw.acquire(L, { requestId: 'o2' })).status, 'QUEUED');
  // The holder of o1 goes away: no heartbeat, no complete.
  let empty = 0;
  const seen: [string, number][] = [];
  const stop = new AbortController();
  const poller = new Task(client().runClaims((work) => {
    seen.push([work.requestId, work.attempt]);
  }, {
    lcidPrefix: prefix('claim_poller_rescues_orphan'), leaseMs: 5000, signal: stop.signal,
    onClaim: (next) => {
      if (next === null) empty++;
    },
  }));
  try {
    assert.ok(await until(() => seen.length >= 2, 10000), JSON.stringify(seen));
    const emptyBefore = empty;
    assert.ok(emptyBefore >= 1, 'the poller saw a 204 before the lease ran out');
    assert.ok(await until(() => empty > emptyBefore, 5000), 'it keeps polling after work');
  } finally {
    stop.abort();
  }
  const report = await poller.outcome(15000);
  assert.ok(report.claims >= 1, JSON.stringify(report));
  assert.deepEqual([report.handled, report.failed], [2, 0]);
  assert.deepEqual(seen, [['o1', 2], ['o2', 1]]);
  await assertDone(raw, L, 'o1');
  await assertDone(raw, L, 'o2');
});

// ------------------------------------------------------------------ lock_all_crossed_no_deadlock

test('lock_all_crossed_no_deadlock', { skip: SKIP, timeout: 180000 }, async () => {
  const A = `${prefix('lock_all_crossed_no_deadlock')}A`;
  const B = `${prefix('lock_all_crossed_no_deadlock')}B`;
  const inUse = new Map([[A, false], [B, false]]);
  const lastFence = new Map([[A, 0], [B, 0]]);
  const problems: string[] = [];
  const handler = async (work: LockAllWork): Promise<void> => {
    if (Object.keys(work.fences).sort().join() !== [A, B].sort().join()) problems.push(`fences ${JSON.stringify(work.fences)}`);
    for (const L of [A, B]) {
      if (inUse.get(L)) problems.push(`overlap on ${L}`);
      inUse.set(L, true);
      const fence = work.fences[L] ?? 0;
      if (fence <= lastFence.get(L)!) problems.push(`fence did not rise on ${L}`);
      lastFence.set(L, fence);
    }
    await sleep(1);
    for (const L of [A, B]) inUse.set(L, false);
  };
  const caller = async (order: string[]): Promise<number> => {
    const c = client();
    let rounds = 0;
    for (let i = 0; i < 200; i++) {
      await c.lockAll(order, handler, { timeoutMs: 30000 });
      rounds++;
    }
    return rounds;
  };
  const start = now();
  const t1 = new Task(caller([A, B]));
  const t2 = new Task(caller([B, A]));
  assert.equal(await t1.outcome(120000), 200);
  assert.equal(await t2.outcome(120000), 200);
  assert.ok(now() - start < 120000, `${Math.round(now() - start)} ms`);
  assert.deepEqual(problems, []);
});

// ------------------------------------------------------------------ proxy_502_is_typed_error

test('proxy_502_is_typed_error', { timeout: 30000 }, async () => {
  const hits: string[] = [];
  const body = '<html><head><title>502 Bad Gateway</title></head><body>Bad Gateway</body></html>';
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hits.push(req.url ?? '');
      res.writeHead(502, { 'Content-Type': 'text/html', 'Content-Length': String(Buffer.byteLength(body)) });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const c = new BatonClient({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: 'k', logger: null });
    const error = await c.acquire(`${prefix('proxy_502_is_typed_error')}L`, { requestId: 'r1' }).then(
      () => assert.fail('a 502 must fail'), (e: unknown) => e);
    assert.ok(error instanceof UnexpectedResponseError, String(error));
    assert.equal(error.status, 502);
    assert.ok(error.bodyText.includes('Bad Gateway'));
    assert.equal(hits.length, 1, 'not retried');
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

// ------------------------------------------------------------------ requeued_request_rescued_by_poller

test('requeued_request_rescued_by_poller', { skip: SKIP, timeout: 60000 }, async () => {
  const P = prefix('requeued_request_rescued_by_poller');
  const L = `${P}L`;
  // The poller first, as every README's first example starts one.
  const stop = new AbortController();
  const seen: [string, number][] = [];
  const errors: unknown[] = [];
  const poller = new Task(client().runClaims((work) => {
    seen.push([work.requestId, work.attempt]);
    return { by: 'poller' };
  }, { lcidPrefix: P, signal: stop.signal, onError: (error) => errors.push(error) }));
  try {
    const holder = client();
    const message = `boom-${randomBytes(3).toString('hex')}`;
    const error = await holder.run(L, (work) => {
      if (work.attempt === 1) throw new Error(message);
      return { by: 'holder' };
    }, { requestId: 'r1' }).then((report) => assert.fail(`run must fail: ${JSON.stringify(report)}`), (e: unknown) => e);
    assert.ok(error instanceof HandlerError, String(error));
    assert.equal((error.cause as Error).message, message);
    assert.deepEqual(error.report, { status: 'FAILED', lcid: L, requestId: 'r1', handled: [], handledOwn: false });
    // Nobody submits anything more on L: only the poller can do r1 now.
    const view = await assertDone(holder, L, 'r1', 10000);
    assert.deepEqual([view.attempt, view.result], [2, { by: 'poller' }]);
  } finally {
    stop.abort();
  }
  assert.deepEqual(await poller.outcome(15000), { claims: 1, handled: 1, failed: 0 });
  assert.deepEqual(seen, [['r1', 2]]);
  assert.deepEqual(errors, []);
});

// ------------------------------------------------------------------ released_before_own_request

test('released_before_own_request', { skip: SKIP, timeout: 60000 }, async () => {
  const [raw, c] = [client(), client()];
  const L = `${prefix('released_before_own_request')}L`;
  const r0 = await raw.acquire(L, { requestId: 'r0', leaseMs: 30000 });
  assert.ok(r0.status === 'ACQUIRED', r0.status);
  assert.equal((await raw.acquire(L, { requestId: 'h1' })).status, 'QUEUED');
  assert.equal((await raw.acquire(L, { requestId: 'w1', mode: 'wait' })).status, 'QUEUED');
  await raw.abort(L, r0.token, 'r0'); // no requeue: L has no holder, h1 at its head
  const events: string[] = [];
  const submitted: Submitted[] = [];
  const report = await c.run(L, (work) => {
    events.push(`handler ${work.requests.map((r) => r.requestId).join(',')}`);
    return { by: 'r2 caller' };
  }, {
    requestId: 'r2', onSubmit: (s) => {
      submitted.push(s);
      events.push('submitted');
    },
  });
  assert.equal(submitted.length, 1);
  assert.deepEqual([submitted[0]!.lcid, submitted[0]!.requestId, submitted[0]!.outcome?.status], [L, 'r2', 'NEXT']);
  assert.deepEqual(events, ['submitted', 'handler h1']);
  assert.equal(report.status, 'RELEASED');
  assert.equal(report.released?.passedTo, 'w1');
  assert.deepEqual([report.requestId, report.handled, report.handledOwn], ['r2', ['h1'], false]);
  // RELEASED, and yet r2 is not done: whoever holds L next does it.
  assert.equal((await c.request(L, 'r2')).state, 'QUEUED');
  assert.deepEqual((await assertDone(c, L, 'h1')).result, { by: 'r2 caller' });
});

// ------------------------------------------------------------------ turn_after_long_wait_is_live

test('turn_after_long_wait_is_live', { skip: SKIP, timeout: 60000 }, async () => {
  const [w1c, w2c] = [client(), client()];
  const L = `${prefix('turn_after_long_wait_is_live')}L`;
  const w1 = await w1c.awaitTurn(L, 'w1', { timeoutMs: 10000 });
  const heldFrom = now();
  const t2 = new Task((async () => {
    // A 1000 ms lease, and a wait of three times that.
    const turn = await w2c.awaitTurn(L, 'w2', { leaseMs: 1000, timeoutMs: 30000 });
    await sleep(1500); // the work, longer than the lease: the heartbeats keep it
    turn.check();
    const released = await turn.complete({ by: 'w2' });
    return { turn, released };
  })());
  assert.ok(await until(async () => (await stateOf(w1c, L, 'w2')) === 'QUEUED', 10000), 'W2 waits');
  await sleep(Math.max(0, 3000 - (now() - heldFrom))); // W1 holds its turn 3000 ms
  assert.equal(t2.done, false, 'W2 waits while W1 holds L');
  assert.equal((await w1.complete({ w1: true })).status, 'RELEASED');
  const { turn, released } = await t2.outcome(30000);
  assert.equal(turn.attempt, 1);
  assert.ok(turn.fence > w1.fence, 'a higher fence than W1');
  assert.equal(released.status, 'RELEASED');
  const view = await assertDone(w2c, L, 'w2');
  assert.deepEqual([view.result, view.attempt], [{ by: 'w2' }, 1]);
});

// ------------------------------------------------------------------ trace_context_travels

test('trace_context_travels', { skip: SKIP, timeout: 60000 }, async () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  assert.ok(context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()));
  assert.ok(trace.setGlobalTracerProvider(provider));
  const tracer = trace.getTracer('conformance');
  try {
    const [holder, submitter] = [client(), client()];
    const L = `${prefix('trace_context_travels')}L`;
    const given = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const entered = deferred();
    const release = deferred();
    const batches: WorkItem[][] = [];
    const fences: number[] = [];
    const active: (string | undefined)[] = [];
    let hold = { traceId: '', spanId: '' };
    const t = new Task(tracer.startActiveSpan('hold', async (span) => {
      hold = span.spanContext();
      try {
        return await holder.run(L, async (work) => {
          batches.push([...work.requests]);
          fences.push(work.fence);
          active.push(trace.getActiveSpan()?.spanContext().spanId);
          entered.resolve();
          if (work.requestId === 'r1') await within(release.promise, 20000, 'release');
          return work.requests.length > 1 ? {} : undefined;
        }, { requestId: 'r1', take: 4 });
      } finally {
        span.end();
      }
    }));
    await within(entered.promise, 10000, 'in the handler');
    assert.equal((await submitter.acquire(L, { requestId: 'r2', traceparent: given, tracestate: 'vendor=x' })).status, 'QUEUED');
    let submit = { traceId: '', spanId: '' };
    await tracer.startActiveSpan('submit', async (span) => {
      submit = span.spanContext();
      assert.equal((await submitter.acquire(L, { requestId: 'r3' })).status, 'QUEUED');
      span.end();
    });
    // Not W3C trace context: the service ignores it and stores the request without one.
    assert.equal((await submitter.acquire(L, { requestId: 'r4', traceparent: 'not-a-traceparent' })).status, 'QUEUED');
    const queued = await submitter.request(L, 'r2');
    assert.deepEqual([queued.state, queued.traceparent, queued.tracestate], ['QUEUED', given, 'vendor=x']);
    // A repeat does not change what is stored.
    await submitter.acquire(L, { requestId: 'r2', traceparent: `00-${submit.traceId}-${submit.spanId}-01` }).catch(() => undefined);
    assert.equal((await submitter.request(L, 'r2')).traceparent, given);
    release.resolve();
    const report = await t.outcome();
    assert.deepEqual(report.handled, ['r1', 'r2', 'r3', 'r4']);

    const holdTp = `00-${hold.traceId}-${hold.spanId}-01`;
    const submitTp = `00-${submit.traceId}-${submit.spanId}-01`;
    assert.deepEqual(batches.map((b) => b.map((r) => [r.requestId, r.traceparent, r.tracestate])), [
      [['r1', holdTp, undefined]],
      [['r2', given, 'vendor=x'], ['r3', submitTp, undefined], ['r4', undefined, undefined]],
    ]);
    const view = await assertDone(submitter, L, 'r3');
    assert.equal(view.traceparent, submitTp);
    assert.equal((await submitter.request(L, 'r4')).traceparent, undefined);

    await provider.forceFlush();
    const work = exporter.getFinishedSpans().filter((span) => span.name === 'baton.work');
    assert.equal(work.length, 2);
    assert.deepEqual(active, work.map((span) => span.spanContext().spanId), 'each span current in its handler');
    assert.deepEqual(work.map((span) => span.links.map((l) => `00-${l.context.traceId}-${l.context.spanId}-0${l.context.traceFlags}`)),
      [[holdTp], [given, submitTp]]);
    assert.equal(work[1]!.links[0]!.context.traceState?.serialize(), 'vendor=x');
    assert.deepEqual(work.map((span) => span.attributes), [
      { 'baton.lcid': L, 'baton.request_id': 'r1', 'baton.fence': fences[0] },
      { 'baton.lcid': L, 'baton.request_id': 'r2', 'baton.fence': fences[1], 'baton.batch_size': 3 },
    ]);
  } finally {
    trace.disable();
    context.disable();
    await provider.shutdown();
  }
});
