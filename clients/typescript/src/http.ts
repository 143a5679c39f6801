/**
 * The transport: one attempt of one Baton call over the global `fetch`, with authentication (an
 * API key, or a workload token file read again as its issuer replaces it), and what its answer
 * means: a success, a problem (maybe worth retrying), an unexpected answer, or no answer.
 *
 * Sending a call again is the next layer's job (retries.ts): this file never sleeps and never
 * repeats an attempt, except the one repeat of a 401 after the token file was replaced.
 */
import { readFileSync } from 'node:fs';
import {
  BatonError, ProblemBody, ProblemError, TransportError, UnexpectedResponseError, errorMessage, problemError,
} from './errors.js';

/** The statuses whose problem answers are worth another attempt. */
const RETRY_STATUSES = new Set([429, 500, 503]);
/** Read timeout slack of a long-poll: its `waitMs` + 5 s. */
export const LONG_POLL_SLACK_MS = 5000;
/** The service's cap on `waitMs`. */
export const LONG_POLL_MAX_MS = 30000;
/** Bodies of unexpected answers are kept up to this many characters. */
const BODY_TEXT_MAX = 64 * 1024;

/** The clock of every lease deadline: monotonic, in milliseconds. */
export const now = (): number => performance.now();

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
  fetch: typeof fetch;
  userAgent: string;
}

/** A successful answer. */
export interface Answer {
  status: number;
  /** The parsed JSON body; null for 204 or an empty body. */
  body: unknown;
  text: string;
  contentType: string | undefined;
  /** {@link now} when the attempt that got this answer was sent. */
  sentAt: number;
  /**
   * {@link now} when the first attempt of the call that may have reached the service was sent
   * (set by the retries; an attempt refused before it connected changed nothing). A grant that
   * is replayed to a retry (acquire, complete) was made then at the earliest: its lease counts
   * from there.
   */
  firstSentAt: number;
  attempts: number;
}

/** One prepared call: every attempt of it sends exactly this. */
export interface Prepared {
  method: string;
  path: string;
  data: string | undefined;
  headers: Record<string, string>;
}

/** What one attempt gave. `reached`: the service may have acted on it (only a refused connection did not). */
export type Attempt =
  | { ok: true; answer: Answer }
  | { ok: false; error: BatonError; retry: boolean; retryAfterMs?: number | undefined; reached: boolean };

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

export class Transport {
  readonly base: string;
  /** `host:port` of the service, named in transport errors and retry warnings. */
  readonly address: string;
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
    this.address = `${parsed.hostname}:${parsed.port || (parsed.protocol === 'https:' ? '443' : '80')}`;
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

  /** The body and headers every attempt of one call sends. */
  prepare(method: string, path: string, body: unknown, headers?: Record<string, string>): Prepared {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const all: Record<string, string> = { ...this.headers, ...headers };
    if (data !== undefined) all['Content-Type'] = 'application/json';
    return { method, path, data, headers: all };
  }

  /**
   * One attempt. A 401 may only mean that the token file was replaced since it was last read:
   * then it is repeated with what the file holds now, at once and once per call (`auth.renewed`
   * remembers it); a 401 was not stored, so this is safe.
   */
  async attempt(call: Prepared, timeoutMs: number, signal: AbortSignal | undefined, auth: { renewed: boolean }): Promise<Attempt> {
    for (;;) {
      const sentAt = now();
      const bearer = this.bearer();
      const headers = bearer === undefined ? call.headers : { ...call.headers, Authorization: `Bearer ${bearer}` };
      const result = await this.once(call, headers, timeoutMs, sentAt, signal);
      if (!result.ok && this.tokenFile && !auth.renewed && (result.error as { status?: unknown }).status === 401
        && !signal?.aborted) {
        auth.renewed = true;
        if (this.tokenFile.reread() !== bearer) continue;
      }
      return result;
    }
  }

  private async once(call: Prepared, headers: Record<string, string>, timeoutMs: number, sentAt: number,
    signal: AbortSignal | undefined): Promise<Attempt> {
    const { method, path } = call;
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
      if (call.data !== undefined) init.body = call.data;
      const response = await this.options.fetch(this.base + path, init);
      status = response.status;
      contentType = response.headers.get('content-type') ?? undefined;
      retryAfter = response.headers.get('retry-after');
      text = await response.text();
    } catch (cause) {
      const refused = errorCode(cause) === 'ECONNREFUSED';
      const what = timedOut ? `timed out after ${Math.round(timeoutMs)} ms: ${this.address}`
        : signal?.aborted ? `aborted by the caller (${this.address})`
          : refused ? `connection refused: ${this.address}` : `no answer from ${this.address}: ${describe(cause)}`;
      const error = new TransportError(`${method} ${path}: ${what}`, timedOut, cause, this.address);
      return { ok: false, error, retry: !signal?.aborted, reached: !refused };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
    return interpret(status, contentType, text, retryAfter, sentAt, 1);
  }
}

/** The outcome of one answer: a success, a (maybe retryable) problem, or an unexpected answer. */
export function interpret(status: number, contentType: string | undefined, text: string, retryAfter: string | null,
  sentAt: number, attempts: number): Attempt {
  const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (status >= 200 && status < 300) {
    if (status === 204 || text.length === 0) {
      return { ok: true, answer: { status, body: null, text, contentType, sentAt, firstSentAt: sentAt, attempts } };
    }
    if (media !== 'application/json' && !media.endsWith('+json')) {
      return { ok: false, error: unexpected(status, contentType, text, 'a success that is not JSON'), retry: false, reached: true };
    }
    try {
      return {
        ok: true, answer: { status, body: JSON.parse(text), text, contentType, sentAt, firstSentAt: sentAt, attempts },
      };
    } catch {
      return {
        ok: false, error: unexpected(status, contentType, text, 'a success whose body does not parse'), retry: false, reached: true,
      };
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
      // 401 and 429 changed nothing; 500 and 503 may have (the answer says only that it failed).
      return { ok: false, error, retry: RETRY_STATUSES.has(status), retryAfterMs, reached: status >= 500 };
    }
  }
  return { ok: false, error: unexpected(status, contentType, text, 'not a problem+json answer'), retry: false, reached: true };
}

function unexpected(status: number, contentType: string | undefined, text: string, why: string): UnexpectedResponseError {
  return new UnexpectedResponseError(status, contentType, text.length > BODY_TEXT_MAX ? text.slice(0, BODY_TEXT_MAX) : text, why);
}

/** The system error code of a failed fetch (its cause, or the first of an AggregateError of several addresses). */
function errorCode(error: unknown): string | undefined {
  const cause = (error as { cause?: unknown } | null)?.cause as { code?: unknown; errors?: unknown } | undefined;
  if (typeof cause?.code === 'string') return cause.code;
  const first = Array.isArray(cause?.errors) ? (cause!.errors as { code?: unknown }[])[0] : undefined;
  return typeof first?.code === 'string' ? first.code : undefined;
}

/** fetch's own errors say "fetch failed"; the cause says what happened (ECONNREFUSED, other side closed...). */
function describe(error: unknown): string {
  const cause = (error as { cause?: unknown } | null)?.cause;
  const code = (cause as { code?: unknown } | null)?.code;
  const inner = cause === undefined ? '' : `: ${typeof code === 'string' ? `${code} ` : ''}${errorMessage(cause)}`;
  return `${errorMessage(error)}${inner}`;
}
