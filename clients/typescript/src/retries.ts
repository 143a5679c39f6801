/**
 * The retry rules every official client follows (clients/README.md, "Retries").
 *
 * A call is sent again with the *same* body after a connection error, a timeout, or a problem
 * answer 429, 500 or 503, because Baton answers a repeated call from what is stored: a retry never
 * does work twice. Anything else is final: another 4xx would fail the same way again, and an
 * answer that is not problem+json (a proxy's HTML 502) is not a state Baton vouches for.
 *
 * Retrying is not silent: after the third failed attempt of one call, one warning names the call,
 * the service's host:port and the last error, so that an outage or a wrong URL is seen long before
 * the deadline. Never a key or a token: neither is in a path or an error message.
 */
import { errorMessage } from './errors.js';
import { Answer, LONG_POLL_SLACK_MS, Transport, now, sleep } from './http.js';

/** After this many failed attempts of one call, its warning is logged (once). */
export const WARN_AFTER_ATTEMPTS = 3;

/**
 * Full-jitter exponential backoff before retry number `attempt` (0 = the first retry): a random
 * sleep in [0, min(cap, base x 2^attempt)], never shorter than the answer's Retry-After.
 * Exported so that the rule can be checked (and reused by callers that poll).
 */
export function backoffDelay(attempt: number, retryAfterMs?: number, rng: () => number = Math.random,
  baseMs = 100, capMs = 5000): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(Math.max(attempt, 0), 30));
  const delay = rng() * ceiling;
  return retryAfterMs !== undefined && retryAfterMs > delay ? retryAfterMs : delay;
}

export interface RetryOptions {
  /** One attempt's timeout (10 s); a long-poll attempt gets its waitMs + 5 s instead. */
  timeoutMs: number;
  /** How long one call keeps retrying (30 s). */
  deadlineMs: number;
  backoffBaseMs: number;
  backoffCapMs: number;
  /** Where the warning of a call that keeps failing goes. */
  warn: (message: string) => void;
}

/** Per-call options of the retry loop. */
export interface CallOptions {
  /** This call's retry budget in ms, instead of the client's `deadlineMs`. */
  deadlineMs?: number | undefined;
  /** An absolute deadline on {@link now} (the holder's lease deadline for heartbeats). Wins over deadlineMs. */
  deadlineAt?: number | undefined;
  /** A long-poll: the attempt timeout is this + 5 s, and the budget starts after the held call. */
  longPollMs?: number | undefined;
  /** Aborts the call at once, its retries included; the call rejects with a TransportError. */
  signal?: AbortSignal | undefined;
  /** Extra headers of this call (the trace context of an acquire), sent with every attempt. */
  headers?: Record<string, string> | undefined;
}

/** Sends calls through a {@link Transport}, again and again until an answer or the deadline. */
export class Retrier {
  constructor(readonly transport: Transport, readonly options: RetryOptions) {}

  /** One call with retries; resolves with the answer or rejects with the last error. */
  async call(method: string, path: string, body: unknown, opts: CallOptions = {}): Promise<Answer> {
    const prepared = this.transport.prepare(method, path, body, opts.headers);
    const o = this.options;
    const perAttempt = opts.longPollMs ? opts.longPollMs + LONG_POLL_SLACK_MS : o.timeoutMs;
    const start = now();
    const deadline = opts.deadlineAt
      ?? start + (opts.deadlineMs ?? o.deadlineMs) + (opts.longPollMs ? perAttempt : 0);
    const auth = { renewed: false };
    let firstSentAt: number | undefined;
    for (let attempt = 1; ; attempt++) {
      const sentAt = now();
      const timeout = Math.max(50, Math.min(perAttempt, deadline - sentAt));
      const result = await this.transport.attempt(prepared, timeout, opts.signal, auth);
      if (result.ok) {
        return { ...result.answer, attempts: attempt, firstSentAt: firstSentAt ?? result.answer.sentAt };
      }
      if (result.reached) firstSentAt ??= sentAt;
      const error = result.error;
      error.attempts = attempt;
      if (!result.retry || opts.signal?.aborted) throw error;
      const delay = backoffDelay(attempt - 1, result.retryAfterMs, Math.random, o.backoffBaseMs, o.backoffCapMs);
      if (now() + delay >= deadline) throw error;
      if (attempt === WARN_AFTER_ATTEMPTS) {
        o.warn(`baton: ${method} ${path} to ${this.transport.address} failed ${attempt} times, the last: `
          + `${errorMessage(error)}; retrying until its deadline, ${((deadline - now()) / 1000).toFixed(1)} s from now`);
      }
      if (!(await sleep(delay, opts.signal))) throw error;
    }
  }
}
