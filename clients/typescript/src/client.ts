/**
 * The Baton client: every call of protocol v1.1 with safe retries, and the holder loops on top
 * (run, hold, runClaims, awaitTurn, awaitResult, lockAll).
 *
 * One client may be shared by a whole process: it holds no state but its options (and the last
 * token read from a token file), and Node's fetch keeps connections alive per origin.
 */
import { randomUUID } from 'node:crypto';
import { DuplicateRequestError, errorMessage } from './errors.js';
import { Handler, HoldClient, batchResults, cutReason, holdLoop } from './holder.js';
import { Answer, CallOptions, Transport, now, sleep } from './http.js';
import {
  AcquireOutcome, Acquired, BusyLocks, DeadLetter, LockView, Next, Queued, QueueView, Released, RequestView, WorkItem,
  expectOutcome, parseBusyLocks, parseDeadLetters, parseLockView, parseQueueView, parseRequestView, shaped,
} from './outcomes.js';
import { TraceContext, traceHeaders } from './tracing.js';
import {
  AwaitTurnOptions, LockAllOptions, LockAllWork, Turn, awaitResult, awaitTurn, lockAll,
} from './wait.js';

/** The client version: the protocol version it speaks. */
export const VERSION = '1.1.0';

/**
 * Where the client reports what its background loops cannot throw (lost locks, failed heartbeats,
 * claim errors), and a token file it could not read again.
 */
export interface Logger {
  warn(message: string): void;
  info?(message: string): void;
  debug?(message: string): void;
}

export interface BatonClientOptions {
  /** The API base, e.g. `http://localhost:8080`. */
  url: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string | undefined;
  /**
   * A file whose trimmed content is sent as `Authorization: Bearer <token>` instead of an apiKey
   * (giving both is a TypeError): a Kubernetes projected service-account token, which the kubelet
   * replaces before it expires. Read here (an Error naming the path if it cannot be), again before
   * an attempt once the last read is older than tokenRefreshMs, and at once after a 401, which is
   * then repeated once if the file holds another token.
   */
  tokenFile?: string | undefined;
  /** How long a token read from tokenFile is reused, in ms (30000); 0 reads the file before every attempt. */
  tokenRefreshMs?: number | undefined;
  /** One attempt's timeout in ms (10000); a long-poll attempt gets its waitMs + 5 s instead. */
  timeoutMs?: number | undefined;
  /** How long one call keeps retrying before its last error is thrown, in ms (30000). */
  deadlineMs?: number | undefined;
  /** Full-jitter backoff: base (100 ms) and cap (5000 ms). */
  backoffBaseMs?: number | undefined;
  backoffCapMs?: number | undefined;
  /** Another fetch (tests, proxies); default: the global fetch of Node 18+. */
  fetch?: typeof fetch | undefined;
  /** Default: warnings to console.warn. `null`: silent. */
  logger?: Logger | null | undefined;
}

/** Per-call options every call accepts. */
export interface CallControl {
  /** This call's retry budget in ms, instead of the client's deadlineMs. */
  deadlineMs?: number | undefined;
  /** Aborts the call; it then rejects with a TransportError (nothing is retried after). */
  signal?: AbortSignal | undefined;
}

/**
 * `traceparent` / `tracestate`: the W3C trace context to store with a new request. Default: the
 * current OpenTelemetry span's, when the application has OpenTelemetry; else none.
 */
export interface AcquireOptions extends CallControl, TraceContext {
  /** The request's name and idempotency key: the same id again never does the work twice. */
  requestId: string;
  /** Any JSON value, at most 64 KiB serialized. */
  payload?: unknown;
  leaseMs?: number | undefined;
  mode?: 'handoff' | 'wait' | undefined;
  /** wait mode: hold the call until the turn (long-poll), at most 30000. */
  waitMs?: number | undefined;
  /** NEXT: how many queued requests at once (1 to 100). */
  take?: number | undefined;
}

/** A batch's results: requestId -> result (undefined or null: no result). */
export type Completions = Map<string, unknown> | Record<string, unknown>;

export interface CompleteOptions extends CallControl {
  /** The one active request (v1), with its optional `result`. */
  requestId?: string | undefined;
  result?: unknown;
  /** The whole active batch (v1.1) instead of requestId/result. */
  completed?: Completions | undefined;
  /** How many queued handoff requests to take next (1 to 100). */
  take?: number | undefined;
}

export interface RunOptions extends TraceContext {
  /** Default: a fresh random id. Give your own to make a resubmission idempotent. */
  requestId?: string | undefined;
  payload?: unknown;
  leaseMs?: number | undefined;
  /** Batch handoff: up to this many requests per NEXT, under one fence (1 to 100). */
  take?: number | undefined;
  /** Called with the acquire's answer, the moment the submission was acknowledged, before any handler runs. */
  onSubmit?: ((outcome: AcquireOutcome) => void) | undefined;
  /**
   * Cancels the run: the handler's signal aborts, the work in hand is given back (abort with
   * requeue), nothing more is completed, and run rejects with the signal's reason.
   */
  signal?: AbortSignal | undefined;
}

/** What one {@link BatonClient.run} (or hold) did. */
export interface RunReport {
  /** QUEUED: the request is stored and another holder does it. RELEASED: this call held the lock until the queue was done. */
  status: 'QUEUED' | 'RELEASED';
  lcid: string;
  requestId: string;
  /** QUEUED: where the request stood (1 = next). */
  position?: number | undefined;
  /** The requestIds whose work this call's handler did and completed, in order. */
  handled: string[];
  released?: Released | undefined;
}

export interface ClaimOptions extends CallControl {
  /** Only lcids that start with this (exact, case-sensitive). */
  lcidPrefix?: string | undefined;
  leaseMs?: number | undefined;
  take?: number | undefined;
}

export interface RunClaimsOptions {
  lcidPrefix?: string | undefined;
  /** The lease of claimed locks (default 30000). Short leases bring back lost claims sooner. */
  leaseMs?: number | undefined;
  take?: number | undefined;
  /** Stops polling; the holder loop in hand runs to its end first. */
  signal?: AbortSignal | undefined;
  /** Called with each claim's answer: the work, or null for 204. */
  onClaim?: ((next: Next | null) => void) | undefined;
  /** Receives handler errors, lost locks and failed claims (default: the logger). Polling goes on. */
  onError?: ((error: unknown) => void) | undefined;
}

/** send times of the answers this client returned, so that hold() can count a lease from them. */
const SENT_AT = new WeakMap<object, number>();

function stamp<T extends object>(value: T, sentAt: number): T {
  SENT_AT.set(value, sentAt);
  return value;
}

const enc = encodeURIComponent;

function put(body: Record<string, unknown>, name: string, value: unknown): void {
  if (value !== undefined && value !== null) body[name] = value;
}

function control(c: CallControl | undefined): CallOptions {
  return { deadlineMs: c?.deadlineMs, signal: c?.signal };
}

const consoleLogger: Logger = { warn: (message) => console.warn(message) };

/**
 * A Baton client. Every call retries a connection error, a timeout, 429, 500 and 503 with the
 * same body until its deadline: Baton answers a repeated call from what is stored, so a retry is
 * always safe (docs/protocol.md, "Guarantees").
 */
export class BatonClient implements HoldClient {
  readonly url: string;
  private readonly transport: Transport;
  private readonly logger: Logger | null;

  constructor(options: BatonClientOptions) {
    const fetchFn = options.fetch ?? globalThis.fetch;
    if (typeof fetchFn !== 'function') throw new TypeError('no fetch: Node.js 18 or later is needed');
    this.logger = options.logger === undefined ? consoleLogger : options.logger;
    this.transport = new Transport({
      url: options.url,
      apiKey: options.apiKey,
      tokenFile: options.tokenFile,
      tokenRefreshMs: options.tokenRefreshMs,
      warn: (message) => this._log('warn', message),
      timeoutMs: options.timeoutMs ?? 10000,
      deadlineMs: options.deadlineMs ?? 30000,
      backoffBaseMs: options.backoffBaseMs ?? 100,
      backoffCapMs: options.backoffCapMs ?? 5000,
      fetch: fetchFn,
      userAgent: `baton-typescript/${VERSION}`,
    });
    this.url = this.transport.base;
  }

  /** A fresh random requestId (128 bits, hex: inside the requestId alphabet). */
  newRequestId(): string {
    return newRequestId();
  }

  // ------------------------------------------------------------------ the calls

  /** Takes the lock for a request (ACQUIRED), queues it (QUEUED), or rescues a stranded queue (NEXT). */
  async acquire(lcid: string, opts: AcquireOptions): Promise<AcquireOutcome> {
    const { outcome, sentAt } = await this._acquire(lcid, opts, control(opts));
    return stamp(outcome, sentAt);
  }

  /** @internal acquire with the send time of the answered attempt. */
  async _acquire(lcid: string, opts: AcquireOptions, call: CallOptions): Promise<{ outcome: AcquireOutcome; sentAt: number }> {
    const body: Record<string, unknown> = { requestId: opts.requestId };
    put(body, 'payload', opts.payload);
    put(body, 'leaseMs', opts.leaseMs);
    put(body, 'mode', opts.mode);
    put(body, 'waitMs', opts.waitMs);
    put(body, 'take', opts.take);
    const headers = await traceHeaders(opts);
    const answer = await this.transport.call('POST', `/v1/locks/${enc(lcid)}/acquire`, body,
      { ...call, longPollMs: opts.waitMs || undefined, headers });
    const outcome = this.parse(answer, (b) => expectOutcome(b, 'ACQUIRED', 'QUEUED', 'NEXT'));
    return { outcome, sentAt: answer.sentAt };
  }

  /** Renews the lease (LockLostError when it is gone). `leaseMs` changes the lease in force from now on. */
  async heartbeat(lcid: string, token: string, opts: CallControl & { leaseMs?: number | undefined } = {}): Promise<Acquired> {
    const { acquired, sentAt } = await this.heartbeatCall(lcid, token, opts.leaseMs, control(opts));
    return stamp(acquired, sentAt);
  }

  private async heartbeatCall(lcid: string, token: string, leaseMs: number | undefined, call: CallOptions):
    Promise<{ acquired: Acquired; sentAt: number }> {
    const body: Record<string, unknown> = { token };
    put(body, 'leaseMs', leaseMs);
    const answer = await this.transport.call('POST', `/v1/locks/${enc(lcid)}/heartbeat`, body, call);
    return { acquired: this.parse(answer, (b) => expectOutcome(b, 'ACQUIRED')), sentAt: answer.sentAt };
  }

  /** @internal a heartbeat with the send time of its answered attempt. */
  async _heartbeatTimed(lcid: string, token: string): Promise<{ leaseMs: number; sentAt: number }> {
    const { acquired, sentAt } = await this.heartbeatCall(lcid, token, undefined, {});
    return { leaseMs: acquired.leaseMs, sentAt };
  }

  /** @internal the background heartbeat: its retries stop at the holder's own lease deadline. */
  async _renew(lcid: string, token: string, deadlineAt: number, signal: AbortSignal): Promise<{ leaseMs: number; sentAt: number }> {
    const { acquired, sentAt } = await this.heartbeatCall(lcid, token, undefined, { deadlineAt, signal });
    return { leaseMs: acquired.leaseMs, sentAt };
  }

  /**
   * Finishes the active request (`requestId`, `result`) or batch (`completed`: requestId ->
   * result), then hands the holder its next work (NEXT) or releases (RELEASED).
   */
  async complete(lcid: string, token: string, opts: CompleteOptions): Promise<Next | Released> {
    const { outcome, sentAt } = await this.completeCall(lcid, token, opts, control(opts));
    return stamp(outcome, sentAt);
  }

  private async completeCall(lcid: string, token: string, opts: CompleteOptions, call: CallOptions):
    Promise<{ outcome: Next | Released; sentAt: number }> {
    const body: Record<string, unknown> = { token };
    if (opts.completed !== undefined) {
      if (opts.requestId !== undefined || (opts.result !== undefined && opts.result !== null)) {
        throw new TypeError('send either requestId (with result) or completed, not both');
      }
      const entries = opts.completed instanceof Map ? [...opts.completed] : Object.entries(opts.completed);
      if (entries.length === 0) throw new TypeError('completed names no request');
      body.completed = entries.map(([requestId, result]) => {
        const entry: Record<string, unknown> = { requestId };
        put(entry, 'result', result);
        return entry;
      });
    } else {
      if (opts.requestId === undefined) throw new TypeError('complete needs requestId or completed');
      body.requestId = opts.requestId;
      put(body, 'result', opts.result);
    }
    put(body, 'take', opts.take);
    const answer = await this.transport.call('POST', `/v1/locks/${enc(lcid)}/complete`, body, call);
    return { outcome: this.parse(answer, (b) => expectOutcome(b, 'NEXT', 'RELEASED')), sentAt: answer.sentAt };
  }

  /** @internal the holder loop's complete: one request, or the batch with its result map. */
  async _complete(lcid: string, token: string, items: readonly WorkItem[], result: unknown, take: number | undefined):
    Promise<{ outcome: Next | Released; sentAt: number }> {
    if (items.length === 1) return this.completeCall(lcid, token, { requestId: items[0]!.requestId, result, take }, {});
    const results = result instanceof Map ? result : batchResults(result, items);
    const completed = new Map<string, unknown>(items.map((i) => [i.requestId, results.get(i.requestId)]));
    return this.completeCall(lcid, token, { completed, take }, {});
  }

  /**
   * The holder gives up its request (its whole batch). With `requeue` it goes back to the head
   * with attempt + 1 (DEAD after maxAttempts), else it ends ABORTED.
   */
  async abort(lcid: string, token: string, requestId: string,
    opts: CallControl & { requeue?: boolean | undefined; reason?: string | undefined } = {}): Promise<Released> {
    const body: Record<string, unknown> = { requestId, token };
    if (opts.requeue) body.requeue = true;
    put(body, 'reason', opts.reason === undefined ? undefined : cutReason(opts.reason));
    const answer = await this.transport.call('POST', `/v1/locks/${enc(lcid)}/abort`, body, control(opts));
    return stamp(this.parse(answer, (b) => expectOutcome(b, 'RELEASED')), answer.sentAt);
  }

  /** @internal the requeue abort after a handler error. */
  async _abortAfter(lcid: string, token: string, requestId: string, reason: string): Promise<void> {
    await this.abort(lcid, token, requestId, { requeue: true, reason });
  }

  /** A waiter takes its QUEUED request out of the queue (NotQueuedError if it no longer waits). */
  async withdraw(lcid: string, requestId: string, opts: CallControl & { reason?: string | undefined } = {}): Promise<Released> {
    const body: Record<string, unknown> = { requestId };
    put(body, 'reason', opts.reason === undefined ? undefined : cutReason(opts.reason));
    const answer = await this.transport.call('POST', `/v1/locks/${enc(lcid)}/abort`, body, control(opts));
    return this.parse(answer, (b) => expectOutcome(b, 'RELEASED'));
  }

  /** The lock view: who holds it, its fence and queue length (never the token). */
  async lock(lcid: string, opts: CallControl = {}): Promise<LockView> {
    const answer = await this.transport.call('GET', `/v1/locks/${enc(lcid)}`, undefined, control(opts));
    return this.parse(answer, parseLockView);
  }

  /** The request view; with `waitMs` held until the request ended or waitMs passed (long-poll). */
  async request(lcid: string, requestId: string, opts: CallControl & { waitMs?: number | undefined } = {}): Promise<RequestView> {
    let path = `/v1/locks/${enc(lcid)}/requests/${enc(requestId)}`;
    if (opts.waitMs !== undefined) path += `?waitMs=${Math.trunc(opts.waitMs)}`;
    const answer = await this.transport.call('GET', path, undefined, { ...control(opts), longPollMs: opts.waitMs || undefined });
    return this.parse(answer, parseRequestView);
  }

  /**
   * One claim of orphaned work of the tenant: NEXT on some lcid, or null (204). Work becomes
   * claimable later than the call that orphaned it: poll with {@link runClaims}, never drain once.
   */
  async claim(opts: ClaimOptions = {}): Promise<Next | null> {
    const body: Record<string, unknown> = {};
    put(body, 'leaseMs', opts.leaseMs);
    put(body, 'take', opts.take);
    put(body, 'lcidPrefix', opts.lcidPrefix);
    const answer = await this.transport.call('POST', '/v1/claims', body, control(opts));
    if (answer.status === 204 || answer.body === null) return null;
    return stamp(this.parse(answer, (b) => expectOutcome(b, 'NEXT')), answer.sentAt);
  }

  /** The tenant's DEAD requests, newest first (admin key). */
  async deadLetters(opts: CallControl & { limit?: number | undefined } = {}): Promise<DeadLetter[]> {
    const path = '/v1/dead-letters' + (opts.limit !== undefined ? `?limit=${Math.trunc(opts.limit)}` : '');
    const answer = await this.transport.call('GET', path, undefined, control(opts));
    return this.parse(answer, parseDeadLetters).items;
  }

  /** Queues a DEAD request again with attempt 1 (admin key). NotDeadError after a redrive that already worked: treat it as done. */
  async redrive(lcid: string, requestId: string, opts: CallControl = {}): Promise<Queued> {
    const answer = await this.transport.call('POST', `/v1/locks/${enc(lcid)}/requests/${enc(requestId)}/retry`,
      undefined, control(opts));
    return this.parse(answer, (b) => expectOutcome(b, 'QUEUED'));
  }

  /** A page of an lcid's queue, head first (admin key). */
  async queue(lcid: string, opts: CallControl & { offset?: number; limit?: number; payload?: boolean } = {}): Promise<QueueView> {
    const path = `/v1/locks/${enc(lcid)}/queue?offset=${Math.trunc(opts.offset ?? 0)}&limit=${Math.trunc(opts.limit ?? 50)}`
      + `&payload=${opts.payload ? 'true' : 'false'}`;
    const answer = await this.transport.call('GET', path, undefined, control(opts));
    return this.parse(answer, parseQueueView);
  }

  /** The tenant's busy lcids, longest held (or longest queue) first (admin key). */
  async busyLocks(opts: CallControl & { order?: 'held' | 'queue'; offset?: number; limit?: number } = {}): Promise<BusyLocks> {
    const path = `/v1/busy-locks?order=${opts.order ?? 'held'}&offset=${Math.trunc(opts.offset ?? 0)}`
      + `&limit=${Math.trunc(opts.limit ?? 50)}`;
    const answer = await this.transport.call('GET', path, undefined, control(opts));
    return this.parse(answer, parseBusyLocks);
  }

  // ------------------------------------------------------------------ the holder

  /**
   * Submits a request and, whenever this call holds the lock, does the queue's work: QUEUED
   * returns at once (the holder does it); ACQUIRED / NEXT calls `handler(work)` for each request
   * (or batch), heartbeating in the background, completes with its result and goes on until
   * RELEASED. A handler that throws: the work is aborted with requeue and run rejects with
   * HandlerError. A lost lock aborts `work.signal` and run rejects with LockLostError.
   */
  async run(lcid: string, handler: Handler, opts: RunOptions = {}): Promise<RunReport> {
    const requestId = opts.requestId ?? newRequestId();
    let first: AcquireOutcome;
    let sentAt: number;
    try {
      ({ outcome: first, sentAt } = await this._acquire(lcid,
        { requestId, payload: opts.payload, leaseMs: opts.leaseMs, take: opts.take, traceparent: opts.traceparent,
          tracestate: opts.tracestate }, {}));
    } catch (error) {
      // An earlier attempt of this very call was stored (its answer was lost to a 503 or a
      // restart) and another holder has taken the request since: that is QUEUED, done.
      if (error instanceof DuplicateRequestError && (error.attempts ?? 1) > 1
        && (error.state === 'ACTIVE' || error.state === 'DONE')) {
        return { status: 'QUEUED', lcid, requestId, handled: [] };
      }
      throw error;
    }
    opts.onSubmit?.(stamp(first, sentAt));
    if (first.status === 'QUEUED') return { status: 'QUEUED', lcid, requestId, position: first.position, handled: [] };
    const own: WorkItem = { requestId, attempt: 1 };
    if (opts.payload !== undefined && opts.payload !== null) own.payload = JSON.parse(JSON.stringify(opts.payload));
    const handled: string[] = [];
    const released = await holdLoop(this, lcid, first, sentAt, own, handler, opts.take, opts.signal, handled);
    return { status: 'RELEASED', lcid, requestId, handled, released };
  }

  /**
   * The holder loop of {@link run} from an ACQUIRED or NEXT you got yourself (acquire, claim):
   * handler, complete, ... until RELEASED. `payload`: of your own request (an ACQUIRED answer
   * does not repeat it). The lease counts from the send time of that answer's call.
   */
  async hold(outcome: Acquired | Next, handler: Handler,
    opts: { payload?: unknown; take?: number | undefined; signal?: AbortSignal | undefined } = {}): Promise<RunReport> {
    // An outcome this client did not return has no known send time: count from now and renew
    // at once, so that the deadline is never later than the lease the service keeps.
    const known = SENT_AT.get(outcome);
    const sentAt = known ?? now() - outcome.leaseMs / 3;
    let own: WorkItem | undefined;
    if (outcome.status === 'ACQUIRED') {
      own = { requestId: outcome.requestId, attempt: 1 };
      if (opts.payload !== undefined && opts.payload !== null) own.payload = JSON.parse(JSON.stringify(opts.payload));
    }
    const requestId = outcome.status === 'ACQUIRED' ? outcome.requestId : outcome.request.requestId;
    const handled: string[] = [];
    const released = await holdLoop(this, outcome.lcid, outcome, sentAt, own, handler, opts.take, opts.signal, handled);
    return { status: 'RELEASED', lcid: outcome.lcid, requestId, handled, released };
  }

  /**
   * The continuous claim poller: claim; on work run the holder loop on that lcid and claim again
   * at once; on 204 sleep a random 200 ms to 1 s and claim again; until `signal` aborts. It never
   * stops at the first 204: work becomes claimable later than the call that orphaned it
   * (docs/claims-and-dead-letters.md). Handler errors and lost locks are reported and polling
   * goes on: one bad request must not stop a worker. Resolves with how many claims got work.
   */
  async runClaims(handler: Handler, opts: RunClaimsOptions = {}): Promise<number> {
    const signal = opts.signal;
    const report = (error: unknown): void => {
      if (opts.onError) opts.onError(error);
      else this._log('warn', `baton: claim poller: ${errorMessage(error)}`);
    };
    const idle = (): Promise<boolean> => sleep(200 + Math.random() * 800, signal);
    let claimed = 0;
    while (!signal?.aborted) {
      let next: Next | null;
      try {
        next = await this.claim({ lcidPrefix: opts.lcidPrefix, leaseMs: opts.leaseMs, take: opts.take });
      } catch (error) {
        report(error);
        await idle();
        continue;
      }
      opts.onClaim?.(next);
      if (next === null) {
        await idle();
        continue;
      }
      claimed++;
      try {
        await this.hold(next, handler, { take: opts.take });
      } catch (error) {
        report(error);
      }
    }
    return claimed;
  }

  // ------------------------------------------------------------------ wait mode

  /**
   * Submits (or repeats) a `wait` request and long-polls until its turn, picks the turn up and
   * heartbeats it: the returned Turn holds the lock until you complete or abort it.
   */
  awaitTurn(lcid: string, requestId?: string, opts: AwaitTurnOptions = {}): Promise<Turn> {
    return awaitTurn(this, lcid, requestId ?? newRequestId(), opts);
  }

  /** Long-polls the request view until DONE, ABORTED or DEAD (WaitTimeoutError after `timeoutMs`). */
  awaitResult(lcid: string, requestId: string,
    opts: { timeoutMs?: number | undefined; signal?: AbortSignal | undefined } = {}): Promise<RequestView> {
    return awaitResult(this, lcid, requestId, opts);
  }

  /**
   * Holds every lcid at once: wait-mode turns taken in sorted UTF-8 byte order (one global order,
   * so two callers never wait for each other in a cycle), runs `handler` with every fence and
   * completes the turns in reverse order. Any failure aborts (no requeue) what is held, withdraws
   * what is waited for, and rethrows. Nothing is atomic across lcids: see the README.
   */
  lockAll<T>(lcids: Iterable<string>, handler: (work: LockAllWork) => T | Promise<T>, opts: LockAllOptions = {}): Promise<T> {
    return lockAll(this, lcids, handler, opts);
  }

  // ------------------------------------------------------------------ internals

  /** @internal */
  _log(level: 'warn' | 'info' | 'debug', message: string): void {
    const logger = this.logger;
    if (!logger) return;
    if (level === 'warn') logger.warn(message);
    else logger[level]?.(message);
  }

  private parse<T>(answer: Answer, parse: (body: unknown) => T): T {
    return shaped(answer.status, answer.contentType, answer.text, () => parse(answer.body));
  }
}

/** A fresh random requestId (128 bits, hex: inside the requestId alphabet). */
export function newRequestId(): string {
  return randomUUID().replace(/-/g, '');
}
