/**
 * The claim poller (docs/claims-and-dead-letters.md): the worker that does work nobody holds.
 *
 * A request that nobody holds is done only when someone comes for its lcid: after a handler threw
 * (the client requeued it), after a holder died, after an operator's retry, and for handoff
 * requests queued behind a wait turn. So every deployment that uses `run` runs one of these for
 * its kind of lcids (docs/claims-and-dead-letters.md#who-rescues-what).
 */
import { Calls } from './calls.js';
import { BatonError, errorMessage } from './errors.js';
import { Handler, hold } from './holder.js';
import { sleep } from './http.js';
import type { Next } from './outcomes.js';

export interface RunClaimsOptions {
  /** Only lcids that start with this (exact, case-sensitive). Give each kind of worker its own. */
  lcidPrefix?: string | undefined;
  /** The lease of claimed locks (default 30000). Short leases bring back lost claims sooner. */
  leaseMs?: number | undefined;
  take?: number | undefined;
  /**
   * Stops polling. A claim in flight ends at once, its retries included (a poller stopped during
   * an outage does not wait out the retry deadline); the holder loop in hand runs to its end.
   */
  signal?: AbortSignal | undefined;
  /** Sees each claim's answer (the work, or null for 204) before its work is done. */
  onClaim?: ((next: Next | null) => void) | undefined;
  /**
   * Receives every handler error, lost lock and failed claim; the poller goes on after each.
   * Default: a warning in the client's logger.
   */
  onError?: ((error: unknown) => void) | undefined;
}

/** What a claim poller did, once stopped. */
export interface ClaimReport {
  /** Claims answered with work. */
  claims: number;
  /** Requests completed. */
  handled: number;
  /** Errors passed to onError (handler errors, lost locks, failed claims). */
  failed: number;
}

/** @internal the poller behind BatonClient.runClaims. */
export async function runClaims(client: Calls, handler: Handler, opts: RunClaimsOptions): Promise<ClaimReport> {
  const signal = opts.signal;
  const report: ClaimReport = { claims: 0, handled: 0, failed: 0 };
  const failed = (error: unknown): void => {
    report.failed++;
    try {
      if (opts.onError) opts.onError(error);
      else client._log('warn', `baton: claim poller: ${errorMessage(error)}`);
    } catch (thrown) {
      client._log('warn', `baton: claim poller: onError threw: ${errorMessage(thrown)}`);
    }
  };
  const idle = (): Promise<boolean> => sleep(200 + Math.random() * 800, signal);
  while (!signal?.aborted) {
    let next: Next | null;
    try {
      next = await client.claim({ lcidPrefix: opts.lcidPrefix, leaseMs: opts.leaseMs, take: opts.take, signal });
    } catch (error) {
      if (signal?.aborted) break; // stopped: the claim in flight was ended, not failed
      failed(error);
      await idle();
      continue;
    }
    try {
      opts.onClaim?.(next);
    } catch (thrown) {
      failed(thrown); // the claimed work is still done: nobody else holds it now
    }
    if (next === null) {
      await idle();
      continue;
    }
    report.claims++;
    try {
      report.handled += (await hold(client, next, handler, { take: opts.take })).handled.length;
    } catch (error) {
      // What was completed before the failure still counts.
      report.handled += (error as BatonError | null)?.report?.handled.length ?? 0;
      failed(error);
    }
  }
  return report;
}
