/**
 * The holder: `run` and `hold`, the background heartbeat that keeps a lease, what a handler is
 * given, and the holder loop of docs/protocol.md ("The holder loop").
 *
 * The holder keeps its own lease deadline (docs/protocol.md, "Lease sizing"): the monotonic send
 * time of its last successful renewal (the acquire, complete, claim or heartbeat that gave it the
 * lock or its current request; for an acquire or a complete, whose retry is answered the grant an
 * earlier attempt made, the send of the first attempt that may have reached the service) plus the
 * lease. It does not trust `expiresAt`: that is the Redis
 * clock, and a holder that cannot reach Baton cannot learn that its lease ran out. When that
 * deadline passes without a renewal, or a heartbeat answers LOCK_LOST, the handler's signal is
 * aborted and the client never completes for it: another holder may already be doing the work.
 *
 * Node runs handlers and heartbeats on one event loop: a handler that blocks it (a long
 * synchronous computation) also stops its heartbeats. Await between steps of long work.
 */
import { Calls, CompleteOptions, cutReason, newRequestId, sentAtOf } from './calls.js';
import { BatonError, DuplicateRequestError, HandlerError, LockLostError, errorMessage } from './errors.js';
import { now } from './http.js';
import type { AcquireOutcome, Acquired, Json, Next, Released, RunReport, WorkItem } from './outcomes.js';
import { TraceContext, copyTrace, inWorkSpan, otel } from './tracing.js';

/** What the lease needs of the client: the heartbeat whose retries stop at the holder's deadline. */
type Renewer = Pick<Calls, '_renew' | '_log'>;

/** After a heartbeat failed for another reason than its deadline, the next one is tried this soon (at most). */
const RETRY_SOON_MS = 250;

/**
 * One holding's lease: heartbeats every lease/3 until stopped, and aborts {@link signal} when the
 * lock is lost (LOCK_LOST) or the holder's own deadline passes with no renewal.
 */
export class Lease {
  private readonly controller = new AbortController();
  private leaseMs: number;
  private deadlineAt: number;
  private nextAt: number;
  private stopped = false;
  private beatTimer: ReturnType<typeof setTimeout> | undefined;
  private deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  private beating: AbortController | undefined;
  private readonly onParentAbort: (() => void) | undefined;
  /** The loss, once the lock is lost. */
  lost: LockLostError | undefined;

  constructor(private readonly client: Renewer, readonly lcid: string, private readonly token: string, leaseMs: number,
    sentAt: number, private readonly alsoCancel: AbortController[] = [], private readonly parent?: AbortSignal) {
    this.leaseMs = leaseMs;
    this.deadlineAt = sentAt + leaseMs;
    this.nextAt = sentAt + leaseMs / 3;
    if (parent) {
      this.onParentAbort = () => this.controller.abort(parent.reason);
      if (parent.aborted) this.controller.abort(parent.reason);
      else parent.addEventListener('abort', this.onParentAbort, { once: true });
    }
  }

  /** Aborted when the lock is lost (reason: the LockLostError), or when the caller's signal aborts. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The holder's own lease deadline, on `performance.now()`. */
  get deadline(): number {
    return this.deadlineAt;
  }

  start(): this {
    this.armDeadline();
    this.schedule();
    return this;
  }

  private armDeadline(): void {
    clearTimeout(this.deadlineTimer);
    // +1: setTimeout may fire a hair early against performance.now().
    this.deadlineTimer = setTimeout(() => this.checkDeadline(), Math.max(0, this.deadlineAt - now()) + 1);
  }

  private checkDeadline(): void {
    if (this.stopped || this.lost) return;
    if (now() >= this.deadlineAt) {
      this.lose(LockLostError.expired(this.lcid, this.leaseMs));
    } else {
      this.armDeadline();
    }
  }

  private schedule(): void {
    if (this.stopped || this.lost) return;
    clearTimeout(this.beatTimer);
    this.beatTimer = setTimeout(() => void this.beat(), Math.max(0, this.nextAt - now()));
  }

  private async beat(): Promise<void> {
    if (this.stopped || this.lost) return;
    if (now() < this.nextAt) {
      this.schedule();
      return;
    }
    const beating = new AbortController();
    this.beating = beating;
    try {
      const renewed = await this.client._renew(this.lcid, this.token, this.deadlineAt, beating.signal);
      if (this.stopped || this.lost) return;
      this.leaseMs = renewed.leaseMs;
      this.deadlineAt = Math.max(this.deadlineAt, renewed.sentAt + renewed.leaseMs);
      this.nextAt = renewed.sentAt + renewed.leaseMs / 3;
      this.armDeadline();
    } catch (error) {
      if (this.stopped || this.lost) return;
      if (error instanceof LockLostError) {
        this.lose(error);
        return;
      }
      // The retries ran until the deadline, or the answer was not retryable: try again soon.
      // The deadline timer, not this loop, decides when the lock counts as lost.
      this.client._log('info', `baton: heartbeat on ${this.lcid} failed: ${errorMessage(error)}`);
      this.nextAt = now() + Math.min(this.leaseMs / 3, RETRY_SOON_MS);
    } finally {
      if (this.beating === beating) this.beating = undefined;
    }
    this.schedule();
  }

  private lose(error: LockLostError): void {
    if (this.stopped || this.lost) return;
    this.lost = error;
    // The log line says who decided, as the error does.
    this.client._log('warn', error.byClient
      ? `baton: lock lost on ${this.lcid}, decided by this client: its own lease deadline passed with no renewal `
        + `(last renewal + ${this.leaseMs} ms); the handler is cancelled and nothing is completed for it`
      : `baton: lock lost on ${this.lcid}: the service answered 409 LOCK_LOST (${error.detail ?? 'no detail'}); `
        + 'the handler is cancelled and nothing is completed for it');
    this.halt();
    this.controller.abort(error);
    for (const other of this.alsoCancel) other.abort(error);
  }

  private halt(): void {
    clearTimeout(this.beatTimer);
    clearTimeout(this.deadlineTimer);
    this.beating?.abort();
    if (this.onParentAbort) this.parent?.removeEventListener('abort', this.onParentAbort);
  }

  /**
   * Stops heartbeating. Returns the loss if the lock was lost, or if the deadline passed meanwhile
   * (then completing would be a write without the lock).
   */
  stop(): LockLostError | undefined {
    if (!this.stopped) {
      if (!this.lost && now() >= this.deadlineAt) this.lose(LockLostError.expired(this.lcid, this.leaseMs));
      this.stopped = true;
      this.halt();
    }
    return this.lost;
  }
}

/**
 * What a `run` / `runClaims` handler gets: the request(s) under one lock and fence.
 *
 * Pass `fence` to the database with every write and have it refuse a lower one than the last
 * stored (for a batch, accept an equal one): that is what turns away a holder that missed its
 * cancellation. Long work should watch `signal` (or call `check()` between steps): once it is
 * aborted the lock is gone and writing must stop.
 */
export interface Work {
  readonly lcid: string;
  /** The fence of this grant or handoff; every request of a batch shares it. */
  readonly fence: number;
  /** The request(s) to do: one, or a batch (take > 1) in FIFO order. */
  readonly requests: readonly WorkItem[];
  /** The first (for take 1 the only) request. */
  readonly request: WorkItem;
  readonly requestId: string;
  readonly payload: Json | undefined;
  readonly attempt: number;
  /** Aborted when the lock is lost (its reason is the LockLostError) or the caller's signal aborted. */
  readonly signal: AbortSignal;
  /** The holder's own lease deadline, on `performance.now()`. */
  readonly deadline: number;
  /** Throws the LockLostError once the lock is lost: call it between steps of long work. */
  check(): void;
}

/** A handler's result: the request's result; for a batch of more than one, a map requestId -> result. */
export type Handler = (work: Work) => unknown;

export function makeWork(lcid: string, fence: number, requests: WorkItem[], lease: Lease): Work {
  const first = requests[0]!;
  return {
    lcid,
    fence,
    requests,
    request: first,
    requestId: first.requestId,
    payload: first.payload,
    attempt: first.attempt,
    signal: lease.signal,
    get deadline() {
      return lease.deadline;
    },
    check() {
      throwIfCancelled(lease.signal, lcid);
    },
  };
}

function throwIfCancelled(signal: AbortSignal, lcid: string): void {
  if (!signal.aborted) return;
  const reason: unknown = signal.reason;
  if (reason instanceof Error) throw reason;
  throw LockLostError.expired(lcid, 0);
}

/** The results of a batch handler: a Map or a plain object keyed by requestId (null/undefined: none). */
export function batchResults(result: unknown, requests: readonly WorkItem[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (result === undefined || result === null) return out;
  if (result instanceof Map) {
    for (const [k, v] of result) out.set(String(k), v);
  } else if (typeof result === 'object' && !Array.isArray(result)) {
    for (const [k, v] of Object.entries(result as Record<string, unknown>)) out.set(k, v);
  } else {
    throw new TypeError('a batch handler returns a map (Map or object) requestId -> result, or nothing');
  }
  const known = new Set(requests.map((r) => r.requestId));
  for (const k of out.keys()) {
    if (!known.has(k)) throw new TypeError(`a batch handler returned a result for ${k}, which is not in the batch`);
  }
  return out;
}

/** The abort reason for a handler's error: its message, cut to the 1024 characters allowed. */
export function reasonOf(error: unknown): string {
  return cutReason(errorMessage(error));
}

/**
 * @internal A lock just granted or handed on (ACQUIRED, NEXT, a turn), counted from `sentAt`: the
 * send of the first attempt of the call that may have made the grant, since the service starts the
 * lease somewhere between that send and the answer. When more than a third of the lease has
 * passed since (a long-poll held until the turn came, retries), it is renewed at once with a
 * heartbeat, so that what is handed to the caller has most of its lease left: a lock granted
 * after a wait of any length can be worked on. LOCK_LOST there is the lock lost; any other failure
 * of that heartbeat is thrown as it is.
 */
export async function renewIfOld(calls: Renewer, lcid: string, token: string, leaseMs: number, sentAt: number):
  Promise<{ leaseMs: number; sentAt: number }> {
  if (now() - sentAt <= leaseMs / 3) return { leaseMs, sentAt };
  // The service's lease started before this answer arrived: it ends within leaseMs from now at
  // the latest, and a heartbeat sent after that could only be refused.
  return calls._renew(lcid, token, now() + leaseMs);
}

/**
 * The holder loop from an ACQUIRED or NEXT (sent at `sentAt`) until RELEASED: handler, complete
 * with its result, and on with the next work. `own`: the caller's own request for an ACQUIRED
 * answer (which does not repeat the payload). With OpenTelemetry each handler call runs in a
 * `baton.work` span linked to the traces that submitted its requests.
 */
async function holdLoop(client: Calls, lcid: string, first: Acquired | Next, sentAt: number,
  own: WorkItem | undefined, handler: Handler, take: number | undefined, signal: AbortSignal | undefined,
  handled: string[]): Promise<Released> {
  const api = await otel();
  let outcome: Acquired | Next | Released = first;
  let at = sentAt;
  while (outcome.status === 'ACQUIRED' || outcome.status === 'NEXT') {
    let items: WorkItem[];
    if (outcome.status === 'ACQUIRED') {
      const mine = own && own.requestId === outcome.requestId ? own : { requestId: outcome.requestId };
      // The trace context and the attempt come back on the ACQUIRED answer; the payload does not.
      items = [copyTrace({ ...mine, attempt: outcome.attempt }, outcome)];
    } else {
      items = outcome.requests;
    }
    const ids = items.map((i) => i.requestId);
    let live: { leaseMs: number; sentAt: number };
    try {
      live = await renewIfOld(client, lcid, outcome.token, outcome.leaseMs, at);
    } catch (error) {
      if (error instanceof LockLostError) throw withHandled(error, handled);
      throw error;
    }
    const lease = new Lease(client, lcid, outcome.token, live.leaseMs, live.sentAt, [], signal).start();
    const work = makeWork(lcid, outcome.fence, items, lease);
    const attributes: Record<string, string | number> = {
      'baton.lcid': lcid, 'baton.request_id': ids[0]!, 'baton.fence': outcome.fence,
    };
    if (items.length > 1) attributes['baton.batch_size'] = items.length;
    let result: unknown;
    try {
      result = await inWorkSpan(api, attributes, items, async () => {
        const value = await handler(work);
        return items.length > 1 ? batchResults(value, items) : value;
      });
    } catch (error) {
      const lost = lease.stop();
      if (lost) throw withHandled(lost, handled, error); // never abort or complete for a lock that is gone
      if (signal?.aborted) {
        await giveBack(client, lcid, outcome.token, ids[0]!, 'cancelled by the caller');
        throw signal.reason;
      }
      let abortError: unknown;
      try {
        await client.abort(lcid, outcome.token, ids[0]!, { requeue: true, reason: reasonOf(error) });
      } catch (failure) {
        abortError = failure;
        client._log('warn', `baton: abort after a handler error on ${lcid} failed: ${errorMessage(failure)}`);
      }
      throw new HandlerError(lcid, ids, [...handled], error, abortError);
    }
    const lost = lease.stop();
    if (lost) throw withHandled(lost, handled);
    if (signal?.aborted) {
      // Cancelled by the caller after the handler returned: give the work back, complete nothing.
      await giveBack(client, lcid, outcome.token, ids[0]!, 'cancelled by the caller');
      throw signal.reason;
    }
    let done: CompleteOptions;
    if (items.length === 1) {
      done = { requestId: ids[0]!, result, take };
    } else {
      const results = result as Map<string, unknown>; // batchResults made it a map above
      done = { completed: new Map(ids.map((id) => [id, results.get(id)])), take };
    }
    let next: { outcome: Next | Released; sentAt: number };
    try {
      next = await client._complete(lcid, outcome.token, done);
    } catch (error) {
      if (error instanceof LockLostError) throw withHandled(error, handled);
      throw error;
    }
    handled.push(...ids);
    outcome = next.outcome;
    at = next.sentAt;
  }
  return outcome;
}

/** Gives held work back (abort with requeue), quietly: the lease requeues it anyway if this fails. */
async function giveBack(client: Calls, lcid: string, token: string, requestId: string, reason: string): Promise<void> {
  await client.abort(lcid, token, requestId, { requeue: true, reason }).catch(() => undefined);
}

function withHandled(error: LockLostError, handled: string[], cause?: unknown): LockLostError {
  error.handled = [...handled];
  if (cause !== undefined && cause !== error && (error as { cause?: unknown }).cause === undefined) {
    (error as { cause?: unknown }).cause = cause;
  }
  return error;
}

/** What {@link RunOptions.onSubmit} is called with. */
export interface Submitted {
  lcid: string;
  /** The caller's request, also when the client generated its id. */
  requestId: string;
  /**
   * The acquire's answer: ACQUIRED, NEXT or QUEUED. Undefined on the duplicate path: the acquire
   * was sent more than once and answered DUPLICATE_REQUEST, so its first attempt stored the
   * request and another holder took it since.
   */
  outcome: AcquireOutcome | undefined;
}

export interface RunOptions extends TraceContext {
  /** Default: a fresh random id. Give your own to make a resubmission idempotent. */
  requestId?: string | undefined;
  payload?: unknown;
  leaseMs?: number | undefined;
  /** Batch handoff: up to this many requests per NEXT, under one fence (1 to 100). */
  take?: number | undefined;
  /**
   * Called exactly once, as soon as Baton acknowledged the request as stored and before any
   * handler runs (awaited if it returns a promise): the place to journal a request that must not
   * be lost track of across a crash of the caller. If it throws, work already in hand is given
   * back (abort with requeue) and run rejects with its error.
   */
  onSubmit?: ((submitted: Submitted) => void | Promise<void>) | undefined;
  /**
   * Cancels the run: the handler's signal aborts, the work in hand is given back (abort with
   * requeue), nothing more is completed, and run rejects with the signal's reason.
   */
  signal?: AbortSignal | undefined;
}

/** The report of a failed run, on whatever it rejects with (also an Error of the caller's). */
function withReport(error: unknown, report: RunReport): unknown {
  if (error instanceof BatonError) {
    error.report = report;
  } else if (error instanceof Error) {
    try {
      (error as { report?: RunReport }).report = report;
    } catch {
      // A frozen error goes on without it.
    }
  }
  return error;
}

function reportOf(status: RunReport['status'], lcid: string, requestId: string, handled: string[]): RunReport {
  return { status, lcid, requestId, handled: [...handled], handledOwn: handled.includes(requestId) };
}

/** @internal `BatonClient.run`. */
export async function run(client: Calls, lcid: string, handler: Handler, opts: RunOptions): Promise<RunReport> {
  const requestId = opts.requestId ?? newRequestId();
  const handled: string[] = [];
  const failed = (error: unknown): unknown => withReport(error, reportOf('FAILED', lcid, requestId, handled));
  let first: AcquireOutcome;
  let sentAt: number;
  try {
    ({ outcome: first, sentAt } = await client._acquire(lcid,
      { requestId, payload: opts.payload, leaseMs: opts.leaseMs, take: opts.take, traceparent: opts.traceparent,
        tracestate: opts.tracestate }, {}));
  } catch (error) {
    // An earlier attempt of this very call was stored (its answer was lost to a timeout, a
    // dropped connection or a 503) and another holder has taken the request since: QUEUED. On a
    // first send the requestId was used before: that is the caller's error.
    if (!(error instanceof DuplicateRequestError && (error.attempts ?? 1) > 1
      && (error.state === 'ACTIVE' || error.state === 'DONE'))) throw failed(error);
    try {
      await opts.onSubmit?.({ lcid, requestId, outcome: undefined });
    } catch (thrown) {
      throw failed(thrown);
    }
    return reportOf('QUEUED', lcid, requestId, handled);
  }
  try {
    await opts.onSubmit?.({ lcid, requestId, outcome: first });
  } catch (thrown) {
    if (first.status !== 'QUEUED') {
      await giveBack(client, lcid, first.token, first.status === 'ACQUIRED' ? first.requestId : first.request.requestId,
        reasonOf(thrown));
    }
    throw failed(thrown);
  }
  if (first.status === 'QUEUED') return { ...reportOf('QUEUED', lcid, requestId, handled), position: first.position };
  const own: WorkItem = { requestId, attempt: 1 };
  if (opts.payload !== undefined && opts.payload !== null) own.payload = JSON.parse(JSON.stringify(opts.payload)) as Json;
  let released: Released;
  try {
    released = await holdLoop(client, lcid, first, sentAt, own, handler, opts.take, opts.signal, handled);
  } catch (error) {
    throw failed(error);
  }
  return { ...reportOf('RELEASED', lcid, requestId, handled), released };
}

/** @internal `BatonClient.hold`. */
export async function hold(client: Calls, outcome: Acquired | Next, handler: Handler,
  opts: { payload?: unknown; take?: number | undefined; signal?: AbortSignal | undefined }): Promise<RunReport> {
  // An outcome this client did not return has no known send time: count from now and renew
  // at once, so that the deadline is never later than the lease the service keeps.
  const sentAt = sentAtOf(outcome) ?? now() - outcome.leaseMs / 3;
  let own: WorkItem | undefined;
  if (outcome.status === 'ACQUIRED') {
    own = { requestId: outcome.requestId, attempt: outcome.attempt };
    if (opts.payload !== undefined && opts.payload !== null) own.payload = JSON.parse(JSON.stringify(opts.payload)) as Json;
  }
  const requestId = outcome.status === 'ACQUIRED' ? outcome.requestId : outcome.request.requestId;
  const handled: string[] = [];
  let released: Released;
  try {
    released = await holdLoop(client, outcome.lcid, outcome, sentAt, own, handler, opts.take, opts.signal, handled);
  } catch (error) {
    throw withReport(error, reportOf('FAILED', outcome.lcid, requestId, handled));
  }
  return { ...reportOf('RELEASED', outcome.lcid, requestId, handled), released };
}
