/**
 * Typed errors of the Baton client.
 *
 * Every error the client throws is a {@link BatonError}. A program branches with `instanceof`
 * (or on `code`): an answer of the service that is `application/problem+json` becomes a
 * {@link ProblemError}, with a subclass for each code a program acts on (`LockLostError`,
 * `DuplicateRequestError`, ...); an answer that is not (a proxy's HTML 502) is an
 * {@link UnexpectedResponseError}; a failure to reach the service is a {@link TransportError}.
 */
import type { Json, RunReport } from './outcomes.js';

/** The problem codes of protocol v1.2 (docs/protocol.md, "Problem codes"). */
export type ProblemCode =
  | 'INVALID_REQUEST'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'NOT_ACCEPTABLE'
  | 'LOCK_LOST'
  | 'DUPLICATE_REQUEST'
  | 'NOT_QUEUED'
  | 'NOT_DEAD'
  | 'BATCH_MISMATCH'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'QUEUE_FULL'
  | 'INTERNAL_ERROR'
  | 'BACKEND_UNAVAILABLE';

/** A problem+json body (RFC 9457) as the service sends it; unknown fields are kept. */
export interface ProblemBody {
  type?: string;
  title?: string;
  status?: number;
  code?: string;
  detail?: string;
  instance?: string;
  field?: string;
  state?: string;
  attempt?: number;
  result?: Json;
  activeRequestIds?: string[];
  [key: string]: unknown;
}

/** The base of every error this client throws. */
export class BatonError extends Error {
  override name = 'BatonError';
  /**
   * How many HTTP attempts the call made before this error was thrown (set by the transport).
   * More than one means earlier attempts may have been stored: `run` relies on it to tell a
   * lost answer from a real duplicate.
   */
  attempts: number | undefined;
  /**
   * Set on whatever `run` / `hold` rejects with (also an Error the caller's signal aborted
   * with): what the run had handled until it failed, with status FAILED.
   */
  report: RunReport | undefined;
}

/** The service answered with a problem (application/problem+json). Match on {@link code}. */
export class ProblemError extends BatonError {
  override name = 'ProblemError';
  /**
   * The HTTP status of the answer. Undefined only on a {@link LockLostError} the client decided
   * itself (its own lease deadline passed): no answer of the service was involved.
   */
  readonly status: number | undefined;
  /** The machine code (`LOCK_LOST`, `QUEUE_FULL`, ...): match on this, never on `detail`. */
  readonly code: string;
  readonly type: string | undefined;
  readonly title: string | undefined;
  /** Human explanation; do not parse it. */
  readonly detail: string | undefined;
  readonly instance: string | undefined;
  /** The offending field's path (INVALID_REQUEST, PAYLOAD_TOO_LARGE): `leaseMs`, `completed[1].reslt`. */
  readonly field: string | undefined;
  /** Where the known request stands (DUPLICATE_REQUEST, NOT_QUEUED, NOT_DEAD). */
  readonly state: string | undefined;
  readonly attempt: number | undefined;
  /** The result of a DONE request (DUPLICATE_REQUEST). */
  readonly result: Json | undefined;
  /** The requests active under the caller's token (BATCH_MISMATCH). */
  readonly activeRequestIds: string[] | undefined;
  /** The answer's Retry-After in milliseconds (429, 503), if it sent one. */
  readonly retryAfterMs: number | undefined;
  /** The whole problem body, unknown fields included. */
  readonly body: ProblemBody;

  constructor(status: number | undefined, body: ProblemBody, retryAfterMs?: number, message?: string) {
    const code = typeof body.code === 'string' ? body.code : 'UNKNOWN';
    super(message ?? `${status} ${code}${typeof body.detail === 'string' ? `: ${body.detail}` : ''}`);
    this.status = status;
    this.code = code;
    this.type = str(body.type);
    this.title = str(body.title);
    this.detail = str(body.detail);
    this.instance = str(body.instance);
    this.field = str(body.field);
    this.state = str(body.state);
    this.attempt = typeof body.attempt === 'number' ? body.attempt : undefined;
    this.result = body.result as Json | undefined;
    this.activeRequestIds = Array.isArray(body.activeRequestIds) ? body.activeRequestIds : undefined;
    this.retryAfterMs = retryAfterMs;
    this.body = body;
  }
}

/** 400: the input breaks a rule (`field` names it). Nothing was stored; never resend it unchanged. */
export class InvalidRequestError extends ProblemError {
  override name = 'InvalidRequestError';
}
/** 401: no or an unknown API key. */
export class UnauthorizedError extends ProblemError {
  override name = 'UnauthorizedError';
}
/** 403: a worker key on an operator call (dead letters, their retry, queue, busy locks). */
export class ForbiddenError extends ProblemError {
  override name = 'ForbiddenError';
}
/** 404: the request is unknown (never sent, or its record expired). */
export class NotFoundError extends ProblemError {
  override name = 'NotFoundError';
}

/**
 * The caller no longer holds the lock for that request: the lease ran out, the lock moved on, or
 * the token is wrong. Stop working and writing; the request is not lost (it is requeued, handed
 * on, or already done).
 *
 * Who decided it tells the two apart. The service: it answered 409 `LOCK_LOST`, and the error has
 * its problem (`status` 409, `body`). The client itself: no heartbeat could renew the lease before
 * the holder's own deadline (send time of the last renewal + lease, on the monotonic clock), so it
 * stopped without asking: then {@link byClient} is true, `status` is undefined, the body
 * holds only `code` and `detail`, and the message (and the log line) say that the client decided.
 */
export class LockLostError extends ProblemError {
  override name = 'LockLostError';
  /** True when the client declared the lock lost because its own lease deadline passed (no HTTP status). */
  byClient = false;
  /** Holder APIs (`run`): the requestIds this call had completed before the lock was lost. */
  handled: string[] | undefined;

  /** The error of a holder whose own lease deadline passed with no renewal (no answer of the service). */
  static expired(lcid: string, leaseMs: number, cause?: unknown): LockLostError {
    const detail = `the client's own lease deadline passed with no renewal (last renewal + ${leaseMs} ms); `
      + 'decided by the client, not an answer of the service';
    const error = new LockLostError(undefined, { code: 'LOCK_LOST', detail }, undefined,
      `lock lost on ${lcid}: ${detail}`);
    error.byClient = true;
    if (cause !== undefined) (error as { cause?: unknown }).cause = cause;
    return error;
  }
}
/** 409: an acquire of a known requestId that needs nothing more from you (`state`, `result`). */
export class DuplicateRequestError extends ProblemError {
  override name = 'DuplicateRequestError';
}
/** 409: a withdrawal of a request that no longer waits (`state` says where it is). */
export class NotQueuedError extends ProblemError {
  override name = 'NotQueuedError';
}
/** 409: a retry of a dead letter that is not DEAD (a repeated retry lands here: treat it as done). */
export class NotDeadError extends ProblemError {
  override name = 'NotDeadError';
}
/** 409: a complete that named other requests than the active batch (`activeRequestIds`); you still hold the lock. */
export class BatchMismatchError extends ProblemError {
  override name = 'BatchMismatchError';
}
/** 413: a payload or result over 64 KiB (`field`), or a body over 256 KiB. */
export class PayloadTooLargeError extends ProblemError {
  override name = 'PayloadTooLargeError';
}
/** 429: the lcid's queue is full; nothing was stored. Retried by the client until its deadline. */
export class QueueFullError extends ProblemError {
  override name = 'QueueFullError';
}
/** 500: an unexpected failure in the service. Retried by the client until its deadline. */
export class InternalServerError extends ProblemError {
  override name = 'InternalServerError';
}
/** 503: Redis down, slow or refusing. Retried by the client until its deadline. */
export class BackendUnavailableError extends ProblemError {
  override name = 'BackendUnavailableError';
}

const PROBLEM_CLASSES: Record<string, new (status: number, body: ProblemBody, retryAfterMs?: number) => ProblemError> = {
  INVALID_REQUEST: InvalidRequestError,
  UNAUTHORIZED: UnauthorizedError,
  FORBIDDEN: ForbiddenError,
  NOT_FOUND: NotFoundError,
  LOCK_LOST: LockLostError,
  DUPLICATE_REQUEST: DuplicateRequestError,
  NOT_QUEUED: NotQueuedError,
  NOT_DEAD: NotDeadError,
  BATCH_MISMATCH: BatchMismatchError,
  PAYLOAD_TOO_LARGE: PayloadTooLargeError,
  QUEUE_FULL: QueueFullError,
  INTERNAL_ERROR: InternalServerError,
  BACKEND_UNAVAILABLE: BackendUnavailableError,
};

/** The typed error of a problem answer: the subclass of its code, else {@link ProblemError}. */
export function problemError(status: number, body: ProblemBody, retryAfterMs?: number): ProblemError {
  const cls = (typeof body.code === 'string' && PROBLEM_CLASSES[body.code]) || ProblemError;
  return new cls(status, body, retryAfterMs);
}

/**
 * The answer was not a Baton answer: not problem+json for an error (a proxy's HTML 502), or a
 * success whose body is not the JSON expected. Never retried: sending it again would only fail
 * the same way, and the text tells the operator what stands in between.
 */
export class UnexpectedResponseError extends BatonError {
  override name = 'UnexpectedResponseError';
  readonly status: number;
  readonly contentType: string | undefined;
  /** The body as text (cut to 64 KiB). */
  readonly bodyText: string;

  constructor(status: number, contentType: string | undefined, bodyText: string, why?: string) {
    const preview = bodyText.length > 200 ? `${bodyText.slice(0, 200)}...` : bodyText;
    super(`unexpected response: HTTP ${status}${contentType ? ` (${contentType})` : ''}${why ? `, ${why}` : ''}: ${preview}`);
    this.status = status;
    this.contentType = contentType;
    this.bodyText = bodyText;
  }
}

/**
 * The service could not be reached, or did not answer in time (`timedOut`). Retried until the
 * deadline. The message names the `host:port` it could not reach ({@link address}), so that a
 * wrong URL shows at once.
 */
export class TransportError extends BatonError {
  override name = 'TransportError';
  /** True when the call's own timeout (per attempt) ran out. */
  readonly timedOut: boolean;
  /** The `host:port` of the service the call went to. */
  readonly address: string | undefined;

  constructor(message: string, timedOut: boolean, cause?: unknown, address?: string) {
    super(message, cause === undefined ? undefined : { cause });
    this.timedOut = timedOut;
    this.address = address;
  }
}

/**
 * A wait of the client ran out: `awaitTurn` (the request was withdrawn, or its turn aborted),
 * `awaitResult` (the request has not ended; {@link lastView} is where it stood) or `lockAll`.
 */
export class WaitTimeoutError extends BatonError {
  override name = 'WaitTimeoutError';
  readonly lcid: string;
  readonly requestId: string | undefined;
  /** awaitResult: the last request view read. */
  readonly lastView: unknown;

  constructor(message: string, lcid: string, requestId?: string, lastView?: unknown) {
    super(message);
    this.lcid = lcid;
    this.requestId = requestId;
    this.lastView = lastView;
  }
}

/**
 * The handler of a holder (`run`, the claim poller) threw. The client aborted the request(s)
 * with `requeue: true` and the error's message as the reason (the service counts attempts and
 * dead-letters after maxAttempts). The request is then back at the head of its lcid with no
 * holder: a claim poller, or the next acquire on that lcid, does it. The handler's own error is
 * {@link cause}.
 */
export class HandlerError extends BatonError {
  override name = 'HandlerError';
  readonly lcid: string;
  /** The requests the handler was working on (a batch has several). */
  readonly requestIds: string[];
  /** The requestIds this call had completed before. */
  readonly handled: string[];
  /**
   * Why the requeue abort failed, when it did: the request then goes back only when its lease runs
   * out. Undefined when the abort succeeded (the request is back at the head of its lcid now).
   */
  readonly abortError: unknown;

  constructor(lcid: string, requestIds: string[], handled: string[], cause: unknown, abortError?: unknown) {
    super(`handler failed on ${lcid} (${requestIds.join(', ')}): ${errorMessage(cause)}`, { cause });
    this.lcid = lcid;
    this.requestIds = requestIds;
    this.handled = handled;
    this.abortError = abortError;
  }
}

/** The message of anything thrown (an Error's message, else its string form). */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  try {
    return String(error);
  } catch {
    return 'unprintable error';
  }
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
