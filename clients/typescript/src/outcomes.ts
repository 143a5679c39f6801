/**
 * Typed outcomes and views of protocol v1.2 (docs/protocol.md, "Outcomes", and
 * docs/api-reference.md, "Answer bodies").
 *
 * Outcomes are a discriminated union on `status`: branch on it, not on the HTTP code (ACQUIRED
 * and NEXT are both 200). The parsers below keep the fields this client knows and ignore the
 * others, as the protocol asks of clients (a newer server may add fields).
 *
 * Fences are JSON integers (int64) read as JavaScript numbers: exact up to 2^53, which Baton's
 * fences (time based, about 1.8e15 today) stay below.
 */
import { copyTrace } from './tracing.js';

/** JSON as Baton carries it (payloads, results, problem bodies). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** One request handed to a holder (NEXT `request` / `requests[i]`). */
export interface WorkItem {
  requestId: string;
  /** The payload it was submitted with; absent when none. */
  payload?: Json;
  /** 1 at first, + 1 each time it was requeued. */
  attempt: number;
  /** The W3C trace context it was submitted with; absent when none. */
  traceparent?: string;
  tracestate?: string;
}

/** You hold the lock; work on your own request. */
export interface Acquired {
  status: 'ACQUIRED';
  lcid: string;
  requestId: string;
  /** The holder's token: a capability, never log it. */
  token: string;
  /** Pass it to your database; reject writes with a lower fence. */
  fence: number;
  leaseMs: number;
  /** When the lease ends, by the Redis clock (RFC 3339). The holder uses its own monotonic clock instead. */
  expiresAt: string;
  /**
   * Which attempt of the request this grant is for (protocol v1.2): 1 for a fresh grant, more for
   * a wait request's turn that is redone. 1 when the answer has none (an older service, or a
   * heartbeat's answer, which is about the lease only).
   */
  attempt: number;
  /** The W3C trace context the request was submitted with (a heartbeat's answer has none). */
  traceparent?: string;
  tracestate?: string;
}

/** The lock is busy; your request is stored at `position` (1 = next). */
export interface Queued {
  status: 'QUEUED';
  lcid: string;
  requestId: string;
  position: number;
  queueLength: number;
}

/** You hold the lock; work on `requests` (one, or a batch under one fence). */
export interface Next {
  status: 'NEXT';
  lcid: string;
  token: string;
  fence: number;
  leaseMs: number;
  expiresAt: string;
  /** The first request (with take 1 the only one). */
  request: WorkItem;
  /** Every request handed over under this token and fence, in FIFO order, `request` first. */
  requests: WorkItem[];
}

/** Nothing more for you: the lock is free, was passed to a wait request, or your request left the queue. */
export interface Released {
  status: 'RELEASED';
  lcid: string;
  /** Requests still QUEUED on the lcid (a request the lock was passed to not counted). */
  pending: number | undefined;
  /** The wait request the lock was passed to (its turn). */
  passedTo: string | undefined;
}

export type AcquireOutcome = Acquired | Queued | Next;
export type CompleteOutcome = Next | Released;
export type Outcome = Acquired | Queued | Next | Released;

/**
 * What one `run` (or `hold`) did. A failed run keeps it too: whatever it rejects with carries
 * the report of what was handled until then as `error.report`, with status FAILED.
 */
export interface RunReport {
  /**
   * QUEUED: the request is stored; another holder or a claim poller does it. RELEASED: this call
   * held the lock until it had nothing more to do, which does not mean the caller's request was
   * done (see {@link handledOwn}). FAILED: only in `error.report` of a run that rejected.
   */
  status: 'QUEUED' | 'RELEASED' | 'FAILED';
  lcid: string;
  /** This caller's request, also when the client generated its id. */
  requestId: string;
  /** QUEUED: where the request stood (1 = next), when known. */
  position?: number | undefined;
  /** The requestIds this call's handler ran for and completed, in order. */
  handled: string[];
  /**
   * True only when this caller's own request is among {@link handled}. A RELEASED run may leave
   * it undone: the lock can pass to a `wait` request queued ahead of it (`released.passedTo`);
   * then the next holder of the lcid or a claim poller does it (`awaitResult` tells when).
   */
  handledOwn: boolean;
  /** RELEASED: the answer that ended the holding. */
  released?: Released | undefined;
}

export type RequestState = 'QUEUED' | 'ACTIVE' | 'DONE' | 'ABORTED' | 'DEAD';

/** GET /v1/locks/{lcid}: never the token. */
export interface LockView {
  lcid: string;
  held: boolean;
  /** While held the holder's fence, else the last one handed out; null when none is known. */
  fence: number | null;
  activeRequestId: string | null;
  activeRequestIds: string[] | undefined;
  heldForMs: number | undefined;
  leaseRemainingMs: number;
  queueLength: number;
}

/** GET /v1/locks/{lcid}/requests/{requestId}. */
export interface RequestView {
  lcid: string;
  requestId: string;
  state: RequestState;
  /** Only while QUEUED; 1 = next. */
  position: number | undefined;
  attempt: number;
  /** The fence of its last grant; absent if never granted. */
  fence: number | undefined;
  /** DONE with a result. */
  result: Json | undefined;
  /** Why it was last aborted, requeued or declared DEAD. */
  reason: string | undefined;
  /** The W3C trace context it was submitted with. */
  traceparent: string | undefined;
  tracestate: string | undefined;
}

export interface DeadLetter {
  lcid: string;
  requestId: string;
  attempts: number;
  reason: string | undefined;
  payload: Json | undefined;
  diedAt: string;
}

export interface DeadLetterList {
  items: DeadLetter[];
  count: number;
}

export interface QueuedRequest {
  requestId: string;
  position: number;
  state: RequestState;
  attempt: number;
  mode: 'handoff' | 'wait';
  queuedForMs: number | undefined;
  reason: string | undefined;
  payload: Json | undefined;
}

export interface QueueView {
  lcid: string;
  queueLength: number;
  offset: number;
  items: QueuedRequest[];
}

export interface BusyLocks {
  order: 'held' | 'queue';
  offset: number;
  busyCount: number;
  rankedAmong: number | undefined;
  items: LockView[];
}

// ---- parsing: a success answer that is not the expected JSON is an UnexpectedResponseError ----

type Obj = Record<string, unknown>;

/** Thrown inside the parsers; the calls turn it into an UnexpectedResponseError with the body. */
export class ShapeError extends Error {}

function obj(value: unknown, what: string): Obj {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ShapeError(`${what} is not an object`);
  return value as Obj;
}
function s(o: Obj, key: string): string {
  const v = o[key];
  if (typeof v !== 'string') throw new ShapeError(`field ${key} is not a string`);
  return v;
}
function n(o: Obj, key: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new ShapeError(`field ${key} is not a number`);
  return v;
}
function optS(o: Obj, key: string): string | undefined {
  const v = o[key];
  return typeof v === 'string' ? v : undefined;
}
function optN(o: Obj, key: string): number | undefined {
  const v = o[key];
  return typeof v === 'number' ? v : undefined;
}
function positiveInt(o: Obj, key: string): number | undefined {
  const v = o[key];
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 ? v : undefined;
}
function optStrings(o: Obj, key: string): string[] | undefined {
  const v = o[key];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined;
}

function workItem(value: unknown): WorkItem {
  const o = obj(value, 'request');
  const item: WorkItem = { requestId: s(o, 'requestId'), attempt: n(o, 'attempt') };
  if (o.payload !== undefined && o.payload !== null) item.payload = o.payload as Json;
  return copyTrace(item, o);
}

export function parseOutcome(value: unknown): Outcome {
  const o = obj(value, 'answer');
  switch (o.status) {
    case 'ACQUIRED':
      return copyTrace<Acquired>({
        status: 'ACQUIRED', lcid: s(o, 'lcid'), requestId: s(o, 'requestId'), token: s(o, 'token'),
        fence: n(o, 'fence'), leaseMs: n(o, 'leaseMs'), expiresAt: s(o, 'expiresAt'),
        attempt: positiveInt(o, 'attempt') ?? 1,
      }, o);
    case 'QUEUED':
      return {
        status: 'QUEUED', lcid: s(o, 'lcid'), requestId: s(o, 'requestId'), position: n(o, 'position'),
        queueLength: n(o, 'queueLength'),
      };
    case 'NEXT': {
      const request = workItem(o.request);
      // A v1 server sends no `requests`: the one request is the whole batch.
      const requests = Array.isArray(o.requests) && o.requests.length > 0 ? o.requests.map(workItem) : [request];
      return {
        status: 'NEXT', lcid: s(o, 'lcid'), token: s(o, 'token'), fence: n(o, 'fence'), leaseMs: n(o, 'leaseMs'),
        expiresAt: s(o, 'expiresAt'), request, requests,
      };
    }
    case 'RELEASED':
      return { status: 'RELEASED', lcid: s(o, 'lcid'), pending: optN(o, 'pending'), passedTo: optS(o, 'passedTo') };
    default:
      throw new ShapeError(`unknown status ${JSON.stringify(o.status)}`);
  }
}

/** The outcome, checked to be one of the statuses the call can answer. */
export function expectOutcome<S extends Outcome['status']>(value: unknown, ...statuses: S[]): Extract<Outcome, { status: S }> {
  const outcome = parseOutcome(value);
  if (!(statuses as string[]).includes(outcome.status)) throw new ShapeError(`status ${outcome.status} where ${statuses.join(' or ')} was expected`);
  return outcome as Extract<Outcome, { status: S }>;
}

export function parseLockView(value: unknown): LockView {
  const o = obj(value, 'lock view');
  return {
    lcid: s(o, 'lcid'),
    held: o.held === true,
    fence: typeof o.fence === 'number' ? o.fence : null,
    activeRequestId: typeof o.activeRequestId === 'string' ? o.activeRequestId : null,
    activeRequestIds: optStrings(o, 'activeRequestIds'),
    heldForMs: optN(o, 'heldForMs'),
    leaseRemainingMs: optN(o, 'leaseRemainingMs') ?? 0,
    queueLength: optN(o, 'queueLength') ?? 0,
  };
}

export function parseRequestView(value: unknown): RequestView {
  const o = obj(value, 'request view');
  return {
    lcid: s(o, 'lcid'),
    requestId: s(o, 'requestId'),
    state: s(o, 'state') as RequestState,
    position: optN(o, 'position'),
    attempt: n(o, 'attempt'),
    fence: optN(o, 'fence'),
    result: o.result as Json | undefined,
    reason: optS(o, 'reason'),
    traceparent: optS(o, 'traceparent'),
    tracestate: optS(o, 'tracestate'),
  };
}

export function parseDeadLetters(value: unknown): DeadLetterList {
  const o = obj(value, 'dead letters');
  const items = Array.isArray(o.items) ? o.items : [];
  return {
    items: items.map((item) => {
      const d = obj(item, 'dead letter');
      return {
        lcid: s(d, 'lcid'), requestId: s(d, 'requestId'), attempts: n(d, 'attempts'), reason: optS(d, 'reason'),
        payload: d.payload as Json | undefined, diedAt: s(d, 'diedAt'),
      };
    }),
    count: optN(o, 'count') ?? items.length,
  };
}

export function parseQueueView(value: unknown): QueueView {
  const o = obj(value, 'queue view');
  const items = Array.isArray(o.items) ? o.items : [];
  return {
    lcid: s(o, 'lcid'),
    queueLength: n(o, 'queueLength'),
    offset: optN(o, 'offset') ?? 0,
    items: items.map((item) => {
      const q = obj(item, 'queued request');
      return {
        requestId: s(q, 'requestId'), position: n(q, 'position'), state: s(q, 'state') as RequestState,
        attempt: n(q, 'attempt'), mode: s(q, 'mode') as 'handoff' | 'wait', queuedForMs: optN(q, 'queuedForMs'),
        reason: optS(q, 'reason'), payload: q.payload as Json | undefined,
      };
    }),
  };
}

export function parseBusyLocks(value: unknown): BusyLocks {
  const o = obj(value, 'busy locks');
  const items = Array.isArray(o.items) ? o.items : [];
  return {
    order: s(o, 'order') as 'held' | 'queue',
    offset: optN(o, 'offset') ?? 0,
    busyCount: optN(o, 'busyCount') ?? 0,
    rankedAmong: optN(o, 'rankedAmong'),
    items: items.map(parseLockView),
  };
}
