/**
 * The calls: one method per endpoint of protocol v1.2 (its answer fields read when present), with safe
 * retries, typed outcomes and typed errors. The holder (holder.ts), wait mode (wait.ts) and the
 * claim poller (claims.ts) are built on these; the client facade (client.ts) offers them all.
 *
 * One client may be shared by a whole process: it holds no state but its options (and the last
 * token read from a token file), and Node's fetch keeps connections alive per origin.
 */
import { randomUUID } from 'node:crypto';
import { UnexpectedResponseError } from './errors.js';
import { Answer, Transport } from './http.js';
import { CallOptions, Retrier } from './retries.js';
import {
  AcquireOutcome, Acquired, BusyLocks, DeadLetter, LockView, Next, Queued, QueueView, Released, RequestView,
  ShapeError, expectOutcome, parseBusyLocks, parseDeadLetters, parseLockView, parseQueueView, parseRequestView,
} from './outcomes.js';
import { TraceContext, traceHeaders } from './tracing.js';

/** The client version: the protocol version it speaks. */
export const VERSION = '1.2.0-SNAPSHOT';

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

export interface ClaimOptions extends CallControl {
  /** Only lcids that start with this (exact, case-sensitive). */
  lcidPrefix?: string | undefined;
  leaseMs?: number | undefined;
  take?: number | undefined;
}

/** Send times of the answers this client returned, so that hold() can count a lease from them. */
const SENT_AT = new WeakMap<object, number>();

function stamp<T extends object>(value: T, sentAt: number): T {
  SENT_AT.set(value, sentAt);
  return value;
}

/** @internal the send time {@link Calls} returned `outcome` with (its lease counts from there), if it did. */
export function sentAtOf(outcome: object): number | undefined {
  return SENT_AT.get(outcome);
}

const enc = encodeURIComponent;

function put(body: Record<string, unknown>, name: string, value: unknown): void {
  if (value !== undefined && value !== null) body[name] = value;
}

function control(c: CallControl | undefined): CallOptions {
  return { deadlineMs: c?.deadlineMs, signal: c?.signal };
}

const consoleLogger: Logger = { warn: (message) => console.warn(message) };

/** A reason (abort, withdraw) cut to the 1024 characters the service accepts. */
export function cutReason(reason: string): string {
  const chars = Array.from(reason);
  return chars.length > 1024 ? chars.slice(0, 1024).join('') : reason;
}

/** A parser's shape problem becomes the typed "unexpected response" error, with the body. */
function shaped<T>(status: number, contentType: string | undefined, text: string, parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    if (e instanceof ShapeError) throw new UnexpectedResponseError(status, contentType, text, e.message);
    throw e;
  }
}

/** A grant or handoff with the time its lease counts from. */
export interface Timed<T> {
  outcome: T;
  /** {@link now} at the send of the first attempt that may have made it (a retry may get it replayed). */
  sentAt: number;
}

/**
 * Every call of the protocol. Each retries a connection error, a timeout, 429, 500 and 503 with
 * the same body until its deadline: Baton answers a repeated call from what is stored, so a
 * retry is always safe (docs/protocol.md, "Guarantees"). {@link BatonClient} adds the holder,
 * wait mode and the claim poller on top.
 */
export class Calls {
  readonly url: string;
  private readonly retrier: Retrier;
  private readonly logger: Logger | null;

  constructor(options: BatonClientOptions) {
    const fetchFn = options.fetch ?? globalThis.fetch;
    if (typeof fetchFn !== 'function') throw new TypeError('no fetch: Node.js 18 or later is needed');
    this.logger = options.logger === undefined ? consoleLogger : options.logger;
    const warn = (message: string): void => this._log('warn', message);
    const transport = new Transport({
      url: options.url,
      apiKey: options.apiKey,
      tokenFile: options.tokenFile,
      tokenRefreshMs: options.tokenRefreshMs,
      warn,
      fetch: fetchFn,
      userAgent: `baton-typescript/${VERSION}`,
    });
    this.retrier = new Retrier(transport, {
      timeoutMs: options.timeoutMs ?? 10000,
      deadlineMs: options.deadlineMs ?? 30000,
      backoffBaseMs: options.backoffBaseMs ?? 100,
      backoffCapMs: options.backoffCapMs ?? 5000,
      warn,
    });
    this.url = transport.base;
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

  /** @internal acquire with the send time its grant counts from. */
  async _acquire(lcid: string, opts: AcquireOptions, call: CallOptions): Promise<Timed<AcquireOutcome>> {
    const body: Record<string, unknown> = { requestId: opts.requestId };
    put(body, 'payload', opts.payload);
    put(body, 'leaseMs', opts.leaseMs);
    put(body, 'mode', opts.mode);
    put(body, 'waitMs', opts.waitMs);
    put(body, 'take', opts.take);
    const headers = await traceHeaders(opts);
    const answer = await this.retrier.call('POST', `/v1/locks/${enc(lcid)}/acquire`, body,
      { ...call, longPollMs: opts.waitMs || undefined, headers });
    const outcome = this.parse(answer, (b) => expectOutcome(b, 'ACQUIRED', 'QUEUED', 'NEXT'));
    // A retry is answered the grant its first attempt may have made: count the lease from there.
    return { outcome, sentAt: answer.firstSentAt };
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
    const answer = await this.retrier.call('POST', `/v1/locks/${enc(lcid)}/heartbeat`, body, call);
    return { acquired: this.parse(answer, (b) => expectOutcome(b, 'ACQUIRED')), sentAt: answer.sentAt };
  }

  /**
   * @internal a holder's heartbeat, with the send time of its answered attempt (a renewal is made
   * by the attempt that reached the service last, never earlier); its retries stop at `deadlineAt`.
   */
  async _renew(lcid: string, token: string, deadlineAt: number, signal?: AbortSignal): Promise<{ leaseMs: number; sentAt: number }> {
    const { acquired, sentAt } = await this.heartbeatCall(lcid, token, undefined, { deadlineAt, signal });
    return { leaseMs: acquired.leaseMs, sentAt };
  }

  /**
   * Finishes the active request (`requestId`, `result`) or batch (`completed`: requestId ->
   * result), then hands the holder its next work (NEXT) or releases (RELEASED).
   */
  async complete(lcid: string, token: string, opts: CompleteOptions): Promise<Next | Released> {
    const { outcome, sentAt } = await this._complete(lcid, token, opts, control(opts));
    return stamp(outcome, sentAt);
  }

  /** @internal complete with the send time a NEXT's handoff counts from. */
  async _complete(lcid: string, token: string, opts: CompleteOptions, call: CallOptions = {}):
    Promise<Timed<Next | Released>> {
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
    const answer = await this.retrier.call('POST', `/v1/locks/${enc(lcid)}/complete`, body, call);
    // A repeated complete is answered the handoff its first attempt may have made.
    return { outcome: this.parse(answer, (b) => expectOutcome(b, 'NEXT', 'RELEASED')), sentAt: answer.firstSentAt };
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
    const answer = await this.retrier.call('POST', `/v1/locks/${enc(lcid)}/abort`, body, control(opts));
    return stamp(this.parse(answer, (b) => expectOutcome(b, 'RELEASED')), answer.sentAt);
  }

  /** A waiter takes its QUEUED request out of the queue (NotQueuedError if it no longer waits). */
  async withdraw(lcid: string, requestId: string, opts: CallControl & { reason?: string | undefined } = {}): Promise<Released> {
    const body: Record<string, unknown> = { requestId };
    put(body, 'reason', opts.reason === undefined ? undefined : cutReason(opts.reason));
    const answer = await this.retrier.call('POST', `/v1/locks/${enc(lcid)}/abort`, body, control(opts));
    return this.parse(answer, (b) => expectOutcome(b, 'RELEASED'));
  }

  /** The lock view: who holds it, its fence and queue length (never the token). */
  async lock(lcid: string, opts: CallControl = {}): Promise<LockView> {
    const answer = await this.retrier.call('GET', `/v1/locks/${enc(lcid)}`, undefined, control(opts));
    return this.parse(answer, parseLockView);
  }

  /** The request view; with `waitMs` held until the request ended or waitMs passed (long-poll). */
  async request(lcid: string, requestId: string, opts: CallControl & { waitMs?: number | undefined } = {}): Promise<RequestView> {
    let path = `/v1/locks/${enc(lcid)}/requests/${enc(requestId)}`;
    if (opts.waitMs !== undefined) path += `?waitMs=${Math.trunc(opts.waitMs)}`;
    const answer = await this.retrier.call('GET', path, undefined, { ...control(opts), longPollMs: opts.waitMs || undefined });
    return this.parse(answer, parseRequestView);
  }

  /**
   * One claim of orphaned work of the tenant: NEXT on some lcid, or null (204). Work becomes
   * claimable later than the call that orphaned it: poll with `runClaims`, never drain once.
   */
  async claim(opts: ClaimOptions = {}): Promise<Next | null> {
    const body: Record<string, unknown> = {};
    put(body, 'leaseMs', opts.leaseMs);
    put(body, 'take', opts.take);
    put(body, 'lcidPrefix', opts.lcidPrefix);
    const answer = await this.retrier.call('POST', '/v1/claims', body, control(opts));
    if (answer.status === 204 || answer.body === null) return null;
    return stamp(this.parse(answer, (b) => expectOutcome(b, 'NEXT')), answer.sentAt);
  }

  /** The tenant's DEAD requests, newest first (admin key). */
  async deadLetters(opts: CallControl & { limit?: number | undefined } = {}): Promise<DeadLetter[]> {
    const path = '/v1/dead-letters' + (opts.limit !== undefined ? `?limit=${Math.trunc(opts.limit)}` : '');
    const answer = await this.retrier.call('GET', path, undefined, control(opts));
    return this.parse(answer, parseDeadLetters).items;
  }

  /** Queues a DEAD request again with attempt 1 (admin key). NotDeadError after a retry that already worked: treat it as done. */
  async retryDeadLetter(lcid: string, requestId: string, opts: CallControl = {}): Promise<Queued> {
    const answer = await this.retrier.call('POST', `/v1/locks/${enc(lcid)}/requests/${enc(requestId)}/retry`,
      undefined, control(opts));
    return this.parse(answer, (b) => expectOutcome(b, 'QUEUED'));
  }

  /** A page of an lcid's queue, head first (admin key). */
  async queue(lcid: string, opts: CallControl & { offset?: number; limit?: number; payload?: boolean } = {}): Promise<QueueView> {
    const path = `/v1/locks/${enc(lcid)}/queue?offset=${Math.trunc(opts.offset ?? 0)}&limit=${Math.trunc(opts.limit ?? 50)}`
      + `&payload=${opts.payload ? 'true' : 'false'}`;
    const answer = await this.retrier.call('GET', path, undefined, control(opts));
    return this.parse(answer, parseQueueView);
  }

  /** The tenant's busy lcids, longest held (or longest queue) first (admin key). */
  async busyLocks(opts: CallControl & { order?: 'held' | 'queue'; offset?: number; limit?: number } = {}): Promise<BusyLocks> {
    const path = `/v1/busy-locks?order=${opts.order ?? 'held'}&offset=${Math.trunc(opts.offset ?? 0)}`
      + `&limit=${Math.trunc(opts.limit ?? 50)}`;
    const answer = await this.retrier.call('GET', path, undefined, control(opts));
    return this.parse(answer, parseBusyLocks);
  }


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
