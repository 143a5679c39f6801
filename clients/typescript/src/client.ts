/**
 * The client facade: every call of the protocol (calls.ts) and, on top, the holder (holder.ts),
 * wait mode and several lcids (wait.ts) and the claim poller (claims.ts). The files import one way
 * only: http <- retries <- calls <- holder / wait / claims <- this one.
 *
 * One client may be shared by a whole process: it holds no state but its options (and the last
 * token read from a token file), and Node's fetch keeps connections alive per origin.
 */
import { Calls, newRequestId } from './calls.js';
import { ClaimReport, RunClaimsOptions, runClaims } from './claims.js';
import { Handler, RunOptions, hold, run } from './holder.js';
import type { Acquired, Next, RequestView, RunReport } from './outcomes.js';
import { AwaitTurnOptions, LockAllOptions, LockAllWork, Turn, awaitResult, awaitTurn, lockAll } from './wait.js';

/**
 * A Baton client. Every call retries a connection error, a timeout, 429, 500 and 503 with the
 * same body until its deadline: Baton answers a repeated call from what is stored, so a retry is
 * always safe (docs/protocol.md, "Guarantees").
 *
 * A process that uses {@link run} also runs a claim poller ({@link runClaims}) for its kind of
 * lcids, here or in another process: work nobody holds (a request requeued after its handler
 * threw, a dead holder's) is done only when someone comes for its lcid
 * (docs/claims-and-dead-letters.md#who-rescues-what).
 */
export class BatonClient extends Calls {
  // ------------------------------------------------------------------ the holder

  /**
   * Submits a request and, whenever this call holds the lock, does the queue's work: QUEUED
   * returns at once (the request is stored; another holder or a claim poller does it); ACQUIRED /
   * NEXT calls `handler(work)` for each request (or batch), heartbeating in the background,
   * completes with its result and goes on until RELEASED. RELEASED does not mean the caller's
   * request was done: the lock may pass to a `wait` request queued ahead of it, and the next
   * holder of the lcid or a claim poller does it; `report.handledOwn` says whether this call did.
   *
   * A handler that throws: the work is aborted with requeue and run rejects with HandlerError;
   * the request is back at the head of its lcid with no holder, and a claim poller (or the next
   * acquire on that lcid) does it. A lost lock aborts `work.signal` and run rejects with
   * LockLostError. Whatever run rejects with carries `error.report`: what it handled until then.
   */
  run(lcid: string, handler: Handler, opts: RunOptions = {}): Promise<RunReport> {
    return run(this, lcid, handler, opts);
  }

  /**
   * The holder loop of {@link run} from an ACQUIRED or NEXT you got yourself (acquire, claim):
   * handler, complete, ... until RELEASED. `payload`: of your own request (an ACQUIRED answer
   * does not repeat it). The lease counts from the send time of that answer's call.
   */
  hold(outcome: Acquired | Next, handler: Handler,
    opts: { payload?: unknown; take?: number | undefined; signal?: AbortSignal | undefined } = {}): Promise<RunReport> {
    return hold(this, outcome, handler, opts);
  }

  /**
   * The continuous claim poller: claim; on work run the holder loop on that lcid and claim again
   * at once; on 204 sleep a random 200 ms to 1 s and claim again; until `signal` aborts. It never
   * stops at the first 204: work becomes claimable later than the call that orphaned it
   * (docs/claims-and-dead-letters.md). Handler errors, lost locks and failed claims go to
   * `onError` (default: a warning in the logger) and polling goes on: one bad request must not
   * stop a worker. Stopping ends a claim in flight at once; the holder loop in hand runs to its
   * end. Resolves, once stopped, with what it did: claims with work, requests handled, failures.
   */
  runClaims(handler: Handler, opts: RunClaimsOptions = {}): Promise<ClaimReport> {
    return runClaims(this, handler, opts);
  }

  // ------------------------------------------------------------------ wait mode

  /**
   * Submits (or repeats) a `wait` request and long-polls until its turn, picks the turn up and
   * heartbeats it: the returned Turn holds the lock until you complete or abort it. The request is
   * withdrawn only when the caller gives up (`timeoutMs`, `signal`); a failed call is thrown with
   * the request still in its place.
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
   * what is waited for, and rethrows. Nothing is atomic across lcids: see the README. `handoff`
   * requests (`run`) on the same lcids queue like everyone's: one left at the head after a turn
   * waits for a claim poller, and every later lockAll waits behind it, so run a claim poller when
   * lockAll and run share lcids.
   */
  lockAll<T>(lcids: Iterable<string>, handler: (work: LockAllWork) => T | Promise<T>, opts: LockAllOptions = {}): Promise<T> {
    return lockAll(this, lcids, handler, opts);
  }
}
