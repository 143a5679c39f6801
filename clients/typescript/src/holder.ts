/**
 * The holder side: the background heartbeat that keeps a lease, what a handler is given, and
 * the holder loop of docs/protocol.md ("The holder loop").
 *
 * The holder keeps its own lease deadline (docs/protocol.md, "Lease sizing"): the monotonic send
 * time of its last successful renewal (the acquire, complete, claim or heartbeat that gave it the
 * lock or its current request) plus the lease. It does not trust `expiresAt`: that is the Redis
 * clock, and a holder that cannot reach Baton cannot learn that its lease ran out. When that
 * deadline passes without a renewal, or a heartbeat answers LOCK_LOST, the handler's signal is
 * aborted and the client never completes for it: another holder may already be doing the work.
 *
 * Node runs handlers and heartbeats on one event loop: a handler that blocks it (a long
 * synchronous computation) also stops its heartbeats. Await between steps of long work.
 */
import { HandlerError, Json, LockLostError, errorMessage } from './errors.js';
import { now } from './http.js';
import type { Acquired, Next, Released, WorkItem } from './outcomes.js';
import { copyTrace, inWorkSpan, otel } from './tracing.js';

/** What the lease needs of the client: the heartbeat whose retries stop at the holder's deadline. */
export interface Renewer {
  /** @internal */
  _renew(lcid: string, token: string, deadlineAt: number, signal: AbortSignal): Promise<{ leaseMs: number; sentAt: number }>;
  /** @internal */
  _log(level: 'warn' | 'info' | 'debug', message: string): void;
}

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
    this.client._log('warn', `baton: lock lost on ${this.lcid}: ${error.message}`);
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

export function cutReason(reason: string): string {
  const chars = Array.from(reason);
  return chars.length > 1024 ? chars.slice(0, 1024).join('') : reason;
}

/** What the holder loop needs of the client. */
export interface HoldClient extends Renewer {
  /** @internal */
  _complete(lcid: string, token: string, items: readonly WorkItem[], result: unknown, take: number | undefined):
    Promise<{ outcome: Next | Released; sentAt: number }>;
  /** @internal */
  _abortAfter(lcid: string, token: string, requestId: string, reason: string): Promise<void>;
}

/**
 * The holder loop from an ACQUIRED or NEXT (sent at `sentAt`) until RELEASED: handler, complete
 * with its result, and on with the next work. `own`: the caller's own request for an ACQUIRED
 * answer (which does not repeat the payload). With OpenTelemetry each handler call runs in a
 * `baton.work` span linked to the traces that submitted its requests.
 */
export async function holdLoop(client: HoldClient, lcid: string, first: Acquired | Next, sentAt: number,
  own: WorkItem | undefined, handler: Handler, take: number | undefined, signal: AbortSignal | undefined,
  handled: string[]): Promise<Released> {
  const api = await otel();
  let outcome: Acquired | Next | Released = first;
  let at = sentAt;
  while (outcome.status === 'ACQUIRED' || outcome.status === 'NEXT') {
    let items: WorkItem[];
    if (outcome.status === 'ACQUIRED') {
      const mine = own && own.requestId === outcome.requestId ? own : { requestId: outcome.requestId, attempt: 1 };
      items = [copyTrace({ ...mine }, outcome)]; // the trace context comes back on the ACQUIRED answer
    } else {
      items = outcome.requests;
    }
    const ids = items.map((i) => i.requestId);
    const lease = new Lease(client, lcid, outcome.token, outcome.leaseMs, at, [], signal).start();
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
        await client._abortAfter(lcid, outcome.token, ids[0]!, 'cancelled by the caller').catch(() => undefined);
        throw signal.reason;
      }
      let abortError: unknown;
      try {
        await client._abortAfter(lcid, outcome.token, ids[0]!, reasonOf(error));
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
      await client._abortAfter(lcid, outcome.token, ids[0]!, 'cancelled by the caller').catch(() => undefined);
      throw signal.reason;
    }
    let next: { outcome: Next | Released; sentAt: number };
    try {
      next = await client._complete(lcid, outcome.token, items, result, take);
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

function withHandled(error: LockLostError, handled: string[], cause?: unknown): LockLostError {
  error.handled = [...handled];
  if (cause !== undefined && cause !== error && (error as { cause?: unknown }).cause === undefined) {
    (error as { cause?: unknown }).cause = cause;
  }
  return error;
}
