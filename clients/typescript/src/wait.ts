/**
 * Wait mode (docs/protocol.md, "Request modes: handoff and wait") and several lcids at once.
 *
 * A `wait` request keeps its place in the lcid's FIFO queue but is only ever done by its
 * submitter: `awaitTurn` long-polls until its turn, picks it up and heartbeats it like a holder.
 * `lockAll` takes such turns on several lcids in one global order (UTF-8 byte order), so that two
 * callers can never wait for each other in a cycle.
 */
import { Buffer } from 'node:buffer';
import { Calls } from './calls.js';
import { BatonError, LockLostError, NotQueuedError, UnexpectedResponseError, WaitTimeoutError, errorMessage } from './errors.js';
import { Lease, reasonOf, renewIfOld } from './holder.js';
import { LONG_POLL_MAX_MS, now } from './http.js';
import type { Acquired, Next, Released, RequestView } from './outcomes.js';
import { TraceContext, inWorkSpan, otel } from './tracing.js';

/** Where the stranded-queue warning sends the reader. */
export const WHO_RESCUES_WHAT = 'docs/claims-and-dead-letters.md#who-rescues-what';
/** The budget of one lock view read while waiting: a hint, never worth a long retry. */
const VIEW_READ_BUDGET_MS = 5000;

/**
 * Options of {@link BatonClient.awaitTurn}. `traceparent` / `tracestate`: the trace context to
 * submit the request with (default: the current OpenTelemetry span's, if any).
 */
export interface AwaitTurnOptions extends TraceContext {
  /** The payload the request is submitted with (kept by the service; a repeat's payload is ignored). */
  payload?: unknown;
  /** The turn's lease, from the pick-up (default 30000). */
  leaseMs?: number | undefined;
  /**
   * How long to wait for the turn (default: no limit). On expiry the request is withdrawn (or,
   * if its turn was just granted, picked up and aborted) and a WaitTimeoutError thrown.
   */
  timeoutMs?: number | undefined;
  /**
   * Gives up waiting, like a timeout (the request is withdrawn); the call rejects with the
   * transport's abort error. Nothing else withdraws: a call that fails (an outage past the retry
   * deadline, an unexpected answer) is thrown with the request still queued in its place, and
   * awaitTurn with the same requestId waits on there.
   */
  signal?: AbortSignal | undefined;
}

/**
 * A wait-mode request's turn, picked up and heartbeated in the background. Finish it with
 * {@link complete} or {@link abort}: until then nobody else gets the lock of the lcid.
 */
export class Turn {
  readonly lcid: string;
  readonly requestId: string;
  /** Pass it to your database with every write. */
  readonly fence: number;
  readonly leaseMs: number;
  /**
   * Which attempt of the request this turn is (from the ACQUIRED answer, protocol v1.2; 1 from an
   * older service): more than 1 means the work is being redone.
   */
  readonly attempt: number;
  /** The payload this process submitted the request with. */
  readonly payload: unknown;
  /** The W3C trace context stored with the request (absent when it was submitted without one). */
  readonly traceparent: string | undefined;
  readonly tracestate: string | undefined;
  /** True once completed or aborted. */
  finished = false;
  readonly #client: Calls;
  readonly #token: string;
  readonly #lease: Lease;

  /** @internal */
  constructor(client: Calls, acquired: Acquired, payload: unknown, lease: Lease) {
    this.#client = client;
    this.#token = acquired.token;
    this.#lease = lease;
    this.lcid = acquired.lcid;
    this.requestId = acquired.requestId;
    this.fence = acquired.fence;
    this.leaseMs = acquired.leaseMs;
    this.attempt = acquired.attempt;
    this.payload = payload;
    this.traceparent = acquired.traceparent;
    this.tracestate = acquired.tracestate;
  }

  /** Aborted when the lock is lost (its reason is the LockLostError): stop writing then. */
  get signal(): AbortSignal {
    return this.#lease.signal;
  }

  /** The holder's own lease deadline, on `performance.now()`. */
  get deadline(): number {
    return this.#lease.deadline;
  }

  /** @internal the loss, if the lock was lost. */
  get lost(): LockLostError | undefined {
    return this.#lease.lost;
  }

  /** Throws the LockLostError once the lock is lost. */
  check(): void {
    if (this.#lease.signal.aborted) throw this.#lease.lost ?? LockLostError.expired(this.lcid, this.leaseMs);
  }

  /**
   * Completes the request with `result`: RELEASED (maybe `passedTo` the next waiter). With
   * `take` the holder may instead be handed queued handoff requests (NEXT), which it must then do.
   * A lost lock throws LockLostError and completes nothing.
   */
  async complete(result?: unknown, opts: { take?: number | undefined } = {}): Promise<Next | Released> {
    this.finish();
    const lost = this.#lease.stop();
    if (lost) throw lost;
    return this.#client.complete(this.lcid, this.#token, { requestId: this.requestId, result, take: opts.take });
  }

  /**
   * Gives the turn up: ABORTED, or with `requeue` back at the head with attempt + 1 (the turn then
   * comes straight back: await it again to pick it up). Sent even if the lock was lost: the
   * service then answers LOCK_LOST.
   */
  async abort(opts: { requeue?: boolean; reason?: string | undefined } = {}): Promise<Released> {
    this.finish();
    this.#lease.stop();
    return this.#client.abort(this.lcid, this.#token, this.requestId, opts);
  }

  private finish(): void {
    if (this.finished) throw new BatonError(`the turn of ${this.requestId} on ${this.lcid} was already completed or aborted`);
    this.finished = true;
  }

  /** Node's util.inspect: never the token. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `Turn { lcid: ${this.lcid}, requestId: ${this.requestId}, fence: ${this.fence} }`;
  }
}

/**
 * Watches a wait for work nobody holds: after each long-poll that answered QUEUED it reads the
 * lock view, and when two reads in a row find no holder and requests queued (handoff work ahead of
 * the turn, or a requeued request, and no claim poller running), it logs one warning. The wait
 * goes on: the warning is for whoever runs the deployment.
 */
class StrandedWatch {
  private inARow = 0;
  private warned = false;

  constructor(private readonly client: Calls, private readonly lcid: string, private readonly requestId: string) {}

  async afterQueued(signal: AbortSignal | undefined): Promise<void> {
    if (this.warned) return;
    let held: boolean;
    let queued: number;
    try {
      ({ held, queueLength: queued } = await this.client.lock(this.lcid, { deadlineMs: VIEW_READ_BUDGET_MS, signal }));
    } catch {
      return; // a hint only: the next long-poll reports a real failure
    }
    this.inARow = !held && queued > 0 ? this.inARow + 1 : 0;
    if (this.inARow < 2) return;
    this.warned = true;
    this.client._log('warn', `baton: ${this.lcid} has no holder and ${queued} request(s) queued while ${this.requestId} `
      + 'waits for its turn: handoff work (or a requeued request) on it waits for a claim poller or the next handoff '
      + `acquire on ${this.lcid}; run a claim poller for these lcids (${WHO_RESCUES_WHAT})`);
  }
}

/** How awaitTurn treats a failure: lockAll gives up as a whole on any. */
export interface AwaitTurnControl {
  /** Aborted (with the loss) when the turn's lock is lost, besides the turn's own signal. */
  alsoCancel?: AbortController[];
  /** Withdraw on any failure, not only when the caller gives up. */
  withdrawOnFailure?: boolean;
}

/** @internal the wait loop behind BatonClient.awaitTurn. */
export async function awaitTurn(client: Calls, lcid: string, requestId: string, opts: AwaitTurnOptions,
  control: AwaitTurnControl = {}): Promise<Turn> {
  const deadline = opts.timeoutMs === undefined ? undefined : now() + opts.timeoutMs;
  const stranded = new StrandedWatch(client, lcid, requestId);
  let submitted = false; // maybe stored from the first send on
  let asked = false;
  try {
    for (;;) {
      const remaining = deadline === undefined ? LONG_POLL_MAX_MS : Math.floor(deadline - now());
      if (asked && remaining <= 0) {
        throw new WaitTimeoutError(`${lcid}/${requestId}: no turn within ${opts.timeoutMs} ms`, lcid, requestId);
      }
      submitted = true;
      const { outcome, sentAt } = await client._acquire(lcid, {
        requestId, payload: opts.payload, leaseMs: opts.leaseMs, mode: 'wait',
        waitMs: Math.max(0, Math.min(remaining, LONG_POLL_MAX_MS)), traceparent: opts.traceparent, tracestate: opts.tracestate,
      }, { signal: opts.signal });
      asked = true;
      if (outcome.status === 'QUEUED') {
        await stranded.afterQueued(opts.signal);
        continue;
      }
      if (outcome.status !== 'ACQUIRED') {
        throw new UnexpectedResponseError(200, 'application/json', JSON.stringify(outcome),
          `a wait request's acquire answered ${outcome.status}`);
      }
      // The turn's lease started at the pick-up, somewhere between the first send of this call
      // and its answer: after a long hold (or retries) it is renewed before it is handed out.
      const live = await renewIfOld(client, lcid, outcome.token, outcome.leaseMs, sentAt);
      const lease = new Lease(client, lcid, outcome.token, live.leaseMs, live.sentAt, control.alsoCancel).start();
      return new Turn(client, { ...outcome, leaseMs: live.leaseMs }, opts.payload, lease);
    }
  } catch (error) {
    // Only a caller who gives up (its timeout, its signal) loses its place; a failure of the
    // call leaves the request queued, where a new awaitTurn with the same requestId finds it.
    const gaveUp = error instanceof WaitTimeoutError || opts.signal?.aborted === true;
    if (submitted && (gaveUp || control.withdrawOnFailure)) await giveUpWaiting(client, lcid, requestId, opts);
    throw error;
  }
}

/** Withdraws a wait request; if its turn was just granted, picks it up and aborts it. */
async function giveUpWaiting(client: Calls, lcid: string, requestId: string, opts: AwaitTurnOptions): Promise<void> {
  const reason = 'the waiter gave up';
  try {
    await client.withdraw(lcid, requestId, { reason });
  } catch (error) {
    if (!(error instanceof NotQueuedError)) {
      client._log('warn', `baton: withdrawing ${requestId} on ${lcid} failed: ${errorMessage(error)}`);
      return;
    }
    if (error.state !== 'ACTIVE') return; // it ended: nothing to give up
    try {
      const outcome = await client.acquire(lcid, {
        requestId, payload: opts.payload, leaseMs: opts.leaseMs, mode: 'wait', traceparent: opts.traceparent,
        tracestate: opts.tracestate,
      });
      if (outcome.status === 'ACQUIRED') await client.abort(lcid, outcome.token, requestId, { reason });
    } catch (failure) {
      client._log('warn', `baton: giving up the turn of ${requestId} on ${lcid} failed: ${errorMessage(failure)}`);
    }
  }
}

/** @internal the long-poll loop behind BatonClient.awaitResult. */
export async function awaitResult(client: Calls, lcid: string, requestId: string,
  opts: { timeoutMs?: number | undefined; signal?: AbortSignal | undefined }): Promise<RequestView> {
  const deadline = opts.timeoutMs === undefined ? undefined : now() + opts.timeoutMs;
  for (;;) {
    const remaining = deadline === undefined ? LONG_POLL_MAX_MS : Math.floor(deadline - now());
    const view = await client.request(lcid, requestId, {
      waitMs: Math.max(0, Math.min(remaining, LONG_POLL_MAX_MS)), signal: opts.signal,
    });
    if (view.state === 'DONE' || view.state === 'ABORTED' || view.state === 'DEAD') return view;
    if (deadline !== undefined && now() >= deadline) {
      throw new WaitTimeoutError(`${lcid}/${requestId} still ${view.state} after ${opts.timeoutMs} ms`, lcid, requestId, view);
    }
  }
}

/** What a {@link BatonClient.lockAll} handler gets: every lcid's fence, and one cancellation for all. */
export interface LockAllWork {
  /** lcid -> the fence of its turn: write to each entity with its own fence. */
  readonly fences: Readonly<Record<string, number>>;
  /** The turns, in the order they were taken (sorted byte order of the lcids). */
  readonly turns: readonly Turn[];
  /** Aborted as soon as any of the locks is lost (or the caller's signal aborted). */
  readonly signal: AbortSignal;
  /** Throws the LockLostError once any lock is lost. */
  check(): void;
}

/** `traceparent` / `tracestate`: the trace context every turn is submitted with (default: the current span's). */
export interface LockAllOptions extends TraceContext {
  /** The lease of each turn (default 30000). */
  leaseMs?: number | undefined;
  /** How long taking all the turns may take (default: no limit); then WaitTimeoutError. */
  timeoutMs?: number | undefined;
  /** Stops waiting for turns and aborts the handler's signal. */
  signal?: AbortSignal | undefined;
}

/** The lcids without duplicates, in sorted UTF-8 byte order: the one global order of lockAll. */
export function byteOrder(lcids: Iterable<string>): string[] {
  return [...new Set(lcids)].sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
}

/** @internal the multi-lcid lock behind BatonClient.lockAll. */
export async function lockAll<T>(client: Calls, lcids: Iterable<string>, handler: (work: LockAllWork) => T | Promise<T>,
  opts: LockAllOptions): Promise<T> {
  const ordered = byteOrder(lcids);
  const deadline = opts.timeoutMs === undefined ? undefined : now() + opts.timeoutMs;
  const cancelled = new AbortController();
  const onAbort = (): void => cancelled.abort(opts.signal?.reason);
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const turns: Turn[] = [];
  let result: T;
  try {
    for (const lcid of ordered) {
      const left = deadline === undefined ? undefined : Math.max(0, deadline - now());
      turns.push(await awaitTurn(client, lcid, client.newRequestId(), {
        leaseMs: opts.leaseMs, timeoutMs: left, signal: opts.signal, traceparent: opts.traceparent, tracestate: opts.tracestate,
      }, { alsoCancel: [cancelled], withdrawOnFailure: true }));
    }
    const fences: Record<string, number> = {};
    for (const turn of turns) fences[turn.lcid] = turn.fence;
    const check = (): void => {
      if (!cancelled.signal.aborted) return;
      for (const turn of turns) if (turn.lost) throw turn.lost;
      const reason: unknown = cancelled.signal.reason;
      throw reason instanceof Error ? reason : new BatonError(`lockAll on ${ordered.join(', ')} was cancelled`);
    };
    // One span for the whole holding. Plural keys: an array under baton.lcid would change the
    // type of the key every other holder span uses.
    const attributes = { 'baton.lcids': turns.map((t) => t.lcid), 'baton.fences': turns.map((t) => t.fence) };
    result = await inWorkSpan(await otel(), attributes, turns,
      async () => handler({ fences, turns, signal: cancelled.signal, check }));
    check();
  } catch (error) {
    for (const turn of [...turns].reverse()) {
      if (turn.finished) continue;
      try {
        await turn.abort({ reason: reasonOf(error) });
      } catch (failure) {
        if (!(failure instanceof LockLostError)) {
          client._log('warn', `baton: lockAll: abort on ${turn.lcid} failed: ${errorMessage(failure)}`);
        }
      }
    }
    throw error;
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
  }
  // The work is done: complete every turn (in reverse order), then report the first failure.
  let firstError: unknown;
  for (const turn of [...turns].reverse()) {
    try {
      await turn.complete();
    } catch (error) {
      firstError ??= error;
    }
  }
  if (firstError !== undefined) throw firstError;
  return result;
}
