/**
 * The transport: one Baton call over the global `fetch`, with the retry rules every official
 * client follows (clients/README.md, "Retries").
 *
 * A call is sent again with the *same* body after a connection error, a timeout, or a problem
 * answer 429, 500 or 503, because Baton answers a repeated call from what is stored: a retry never
 * does work twice. Anything else is final: another 4xx would fail the same way again, and an
 * answer that is not problem+json (a proxy's HTML 502) is not a state Baton vouches for.
 */
import { readFileSync } from 'node:fs';
import {
  BatonError, ProblemBody, ProblemError, TransportError, UnexpectedResponseError, errorMessage, problemError,
} from './errors.js';

/** The statuses whose problem answers are retried. */
const RETRY_STATUSES = new Set([429, 500, 503]);
/** Read timeout slack of a long-poll: its `waitMs` + 5 s. */
export const LONG_POLL_SLACK_MS = 5000;
/** The service's cap on `waitMs`. */
export const LONG_POLL_MAX_MS = 30000;
/** Bodies of unexpected answers are kept up to this many characters. */
const BODY_TEXT_MAX = 64 * 1024;

/** The clock of every lease deadline: monotonic, in milliseconds. */
export const now = (): number => performance.now();

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

/** Retry-After in milliseconds: delta-seconds only (Baton never sends an HTTP-date). */
export function parseRetryAfter(value: string | null): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (!/^\d+(\.\d+)?$/.test(text)) return undefined;
  return Number(text) * 1000;
}

/**
 * Sleeps `ms`, or less if `signal` aborts first. Resolves true when the whole sleep happened.
 * The timer is not unref'd: a caller waiting on it is work in progress.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (full: boolean): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(full);
    };
    const onAbort = (): void => done(false);
    const timer = setTimeout(() => done(true), Math.max(0, ms));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export interface TransportOptions {
  url: string;
  apiKey?: string | undefined;
  /** A file whose content is the bearer token (a projected service-account token); exclusive with apiKey. */
  tokenFile?: string | undefined;
  /** How long a token read from tokenFile is reused before the file is read again (30 s; 0: every attempt). */
  tokenRefreshMs?: number | undefined;
  /** Where a failed re-read of tokenFile is reported. */
  warn?: ((message: string) => void) | undefined;
  /** One attempt's timeout (10 s); a long-poll attempt gets its waitMs + 5 s instead. */
  timeoutMs: number;
  /** How long one call keeps retrying (30 s). */
  deadlineMs: number;
  backoffBaseMs: number;
  backoffCapMs: number;
  fetch: typeof fetch;
  userAgent: string;
}

/** Per-call options of the transport. */
export interface CallOptions {
  /** This call's retry budget in ms, instead of the client's `deadlineMs`. */
  deadlineMs?: number | undefined;
  /** An absolute deadline on {@link now} (the holder's lease deadline for heartbeats). Wins over deadlineMs. */
  deadlineAt?: number | undefined;
  /** A long-poll: the attempt timeout is this + 5 s, and the budget starts after the held call. */
  longPollMs?: number | undefined;
  /** Aborts the call (no retry after it); the call rejects with a TransportError. */
  signal?: AbortSignal | undefined;
  /** Extra headers of this call (the trace context of an acquire), sent with every attempt. */
  headers?: Record<string, string> | undefined;
}

/** A successful answer. */
export interface Answer {
  status: number;
  /** The parsed JSON body; null for 204 or an empty body. */
  body: unknown;
  text: string;
  contentType: string | undefined;
  /** {@link now} when the attempt that got this answer was sent: a lease counts from there. */
  sentAt: number;
  attempts: number;
}

/**
 * The bearer token of a file that its issuer replaces before the token expires (the kubelet, about
 * hourly, by a symlink swap): read at construction, then again once the last read is older than
 * `refreshMs`, so that a long-running process never keeps sending an expired token.
 */
class TokenFile {
  private token: string;
  private readAt: number;
  private warned = false;

  constructor(readonly path: string, readonly refreshMs: number, private readonly warn: (message: string) => void) {
    // A client that cannot authenticate should fail where it is configured, not at its first call.
    const read = readToken(path);
    if (typeof read !== 'string') throw new Error(`token file ${path}: ${read.why}`, { cause: read.cause });
    this.token = read;
    this.readAt = now();
  }

  /** The token to send now. */
  current(): string {
    if (now() - this.readAt >= this.refreshMs) this.reread();
    return this.token;
  }

  /**
   * Reads the file at once. A failed read keeps the last token: the file is missing only for a
   * moment of its replacement, and the old token usually still has minutes to live. The read time
   * stays as it was then, so that the next attempt tries again.
   */
  reread(): string {
    const read = readToken(this.path);
    if (typeof read === 'string') {
      this.token = read;
      this.readAt = now();
      this.warned = false;
    } else if (!this.warned) {
      this.warned = true;
      this.warn(`baton: token file ${this.path}: ${read.why}; the last token read is sent until it can be read again`);
    }
    return this.token;
  }
}

/** The trimmed content of a token file, or why it is none; never the content in the reason. */
function readToken(path: string): string | { why: string; cause?: unknown } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (cause) {
    const code = (cause as { code?: unknown } | null)?.code;
    return { why: `cannot be read${typeof code === 'string' ? ` (${code})` : ''}`, cause };
  }
  const token = text.trim();
  if (token.length === 0) return { why: 'is empty' };
  // fetch rejects such a header with its value in the message: that must not be the token.
  if (!/^[\x21-\x7e]+$/.test(token)) return { why: 'holds characters an HTTP header cannot carry' };
  return token;
}

type Attempt =
  | { ok: true; answer: Answer }
  | { ok: false; error: BatonError; retry: boolean; retryAfterMs?: number | undefined };

export class Transport {
  readonly base: string;
  private readonly headers: Record<string, string>;
  private readonly tokenFile: TokenFile | undefined;

  constructor(readonly options: TransportOptions) {
    let parsed: URL;
    try {
      parsed = new URL(options.url);
    } catch {
      throw new TypeError(`not an http(s) URL: ${JSON.stringify(options.url)}`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new TypeError(`not an http(s) URL: ${JSON.stringify(options.url)}`);
    }
    this.base = options.url.replace(/\/+$/, '');
    if (options.apiKey && options.tokenFile) throw new TypeError('give apiKey or tokenFile, not both');
    const refreshMs = options.tokenRefreshMs ?? 30000;
    if (!(refreshMs >= 0)) throw new TypeError(`tokenRefreshMs must be 0 or more, not ${refreshMs}`);
    this.headers = { Accept: 'application/json, application/problem+json', 'User-Agent': options.userAgent };
    this.tokenFile = options.tokenFile
      ? new TokenFile(options.tokenFile, refreshMs, options.warn ?? ((message) => console.warn(message)))
      : undefined;
  }

  /** The bearer token of the next attempt, if the client has one. */
  private bearer(): string | undefined {
    return this.tokenFile ? this.tokenFile.current() : this.options.apiKey || undefined;
  }

  /** One call with retries; resolves with the answer or rejects with the last error. */
  async call(method: string, path: string, body: unknown, opts: CallOptions = {}): Promise<Answer> {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { ...this.headers, ...opts.headers };
    if (data !== undefined) headers['Content-Type'] = 'application/json';
    const o = this.options;
    const perAttempt = opts.longPollMs ? opts.longPollMs + LONG_POLL_SLACK_MS : o.timeoutMs;
    const start = now();
    const deadline = opts.deadlineAt
      ?? start + (opts.deadlineMs ?? o.deadlineMs) + (opts.longPollMs ? perAttempt : 0);
    let renewed = false;
    for (let attempt = 1; ; attempt++) {
      const sentAt = now();
      const timeout = Math.max(50, Math.min(perAttempt, deadline - sentAt));
      const bearer = this.bearer();
      if (bearer !== undefined) headers.Authorization = `Bearer ${bearer}`;
      const result = await this.once(method, path, data, headers, timeout, sentAt, attempt, opts.signal);
      if (result.ok) return result.answer;
      const error = result.error;
      error.attempts = attempt;
      // A 401 may only mean that the file was replaced since it was last read: one more attempt
      // with what it holds now, at once and only once (a 401 was not stored, so this is safe).
      if (this.tokenFile && !renewed && (error as { status?: unknown }).status === 401 && !opts.signal?.aborted) {
        renewed = true;
        if (this.tokenFile.reread() !== bearer) continue;
      }
      if (!result.retry || opts.signal?.aborted) throw error;
      const delay = backoffDelay(attempt - 1, result.retryAfterMs, Math.random, o.backoffBaseMs, o.backoffCapMs);
      if (now() + delay >= deadline) throw error;
      if (!(await sleep(delay, opts.signal))) throw error;
    }
  }

  private async once(method: string, path: string, data: string | undefined, headers: Record<string, string>,
    timeoutMs: number, sentAt: number, attempt: number, signal: AbortSignal | undefined): Promise<Attempt> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onAbort = (): void => controller.abort();
    if (signal?.aborted) controller.abort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    let status: number;
    let contentType: string | undefined;
    let text: string;
    let retryAfter: string | null;
    try {
      const init: RequestInit = { method, headers, signal: controller.signal };
      if (data !== undefined) init.body = data;
      const response = await this.options.fetch(this.base + path, init);
      status = response.status;
      contentType = response.headers.get('content-type') ?? undefined;
      retryAfter = response.headers.get('retry-after');
      text = await response.text();
    } catch (cause) {
      const what = timedOut ? `timed out after ${Math.round(timeoutMs)} ms`
        : signal?.aborted ? 'aborted by the caller' : describe(cause);
      return { ok: false, error: new TransportError(`${method} ${path}: ${what}`, timedOut, cause), retry: !signal?.aborted };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
    return interpret(status, contentType, text, retryAfter, sentAt, attempt);
  }
}

/** The outcome of one answer: a success, a (maybe retryable) problem, or an unexpected answer. */
export function interpret(status: number, contentType: string | undefined, text: string, retryAfter: string | null,
  sentAt: number, attempts: number): Attempt {
  const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (status >= 200 && status < 300) {
    if (status === 204 || text.length === 0) {
      return { ok: true, answer: { status, body: null, text, contentType, sentAt, attempts } };
    }
    if (media !== 'application/json' && !media.endsWith('+json')) {
      return { ok: false, error: unexpected(status, contentType, text, 'a success that is not JSON'), retry: false };
    }
    try {
      return { ok: true, answer: { status, body: JSON.parse(text), text, contentType, sentAt, attempts } };
    } catch {
      return { ok: false, error: unexpected(status, contentType, text, 'a success whose body does not parse'), retry: false };
    }
  }
  if (media === 'application/problem+json' || media === 'application/json') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      && typeof (parsed as ProblemBody).code === 'string') {
      const retryAfterMs = parseRetryAfter(retryAfter);
      const error: ProblemError = problemError(status, parsed as ProblemBody, retryAfterMs);
      return { ok: false, error, retry: RETRY_STATUSES.has(status), retryAfterMs };
    }
  }
  return { ok: false, error: unexpected(status, contentType, text, 'not a problem+json answer'), retry: false };
}

function unexpected(status: number, contentType: string | undefined, text: string, why: string): UnexpectedResponseError {
  return new UnexpectedResponseError(status, contentType, text.length > BODY_TEXT_MAX ? text.slice(0, BODY_TEXT_MAX) : text, why);
}

/** fetch's own errors say "fetch failed"; the cause says what happened (ECONNREFUSED, other side closed...). */
function describe(error: unknown): string {
  const cause = (error as { cause?: unknown } | null)?.cause;
  const code = (cause as { code?: unknown } | null)?.code;
  const inner = cause === undefined ? '' : `: ${typeof code === 'string' ? `${code} ` : ''}${errorMessage(cause)}`;
  return `${errorMessage(error)}${inner}`;
}
