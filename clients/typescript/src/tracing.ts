/**
 * W3C trace context that travels with a request (docs/protocol.md), and OpenTelemetry when the
 * application has it.
 *
 * `@opentelemetry/api` is an optional peer dependency: it is loaded once with a dynamic import
 * and, when it is not installed, the client sends no header of its own and starts no span. The
 * types below are the few parts of the API this client uses, written out so that neither the
 * build nor an application's type check needs the package.
 */

/** A trace context to submit a request with, as the W3C `traceparent` / `tracestate` headers. */
export interface TraceContext {
  /** `00-<trace id>-<span id>-<flags>`; the service ignores one that is not valid W3C trace context. */
  traceparent?: string | undefined;
  tracestate?: string | undefined;
}

interface SpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote?: boolean;
  traceState?: { serialize(): string } | undefined;
}

interface Span {
  recordException(exception: Error | string): void;
  setStatus(status: { code: number }): unknown;
  end(): void;
}

type AttributeValue = string | number | boolean | string[] | number[];

interface Api {
  trace: {
    getTracer(name: string): {
      startActiveSpan<T>(name: string, options: { links: { context: SpanContext }[]; attributes: Record<string, AttributeValue> },
        fn: (span: Span) => T): T;
    };
    getSpanContext(context: unknown): SpanContext | undefined;
  };
  context: { active(): unknown };
  isSpanContextValid(spanContext: SpanContext): boolean;
  createTraceState?: (raw: string) => { serialize(): string };
  SpanStatusCode: { ERROR: number };
}

const API_MODULE = '@opentelemetry/api';
let loading: Promise<Api | null> | undefined;
let loaded: Api | null | undefined;

/** The OpenTelemetry API, or null when the application does not have it. Loaded once. */
export function otel(): Promise<Api | null> {
  loading ??= importApi(API_MODULE).then((api) => (loaded = api));
  return loading;
}

/** @internal the loader, with the module name as a parameter so that a missing one can be tested. */
export async function importApi(name: string): Promise<Api | null> {
  try {
    const mod = (await import(name)) as Partial<Api> & { default?: Partial<Api> };
    // A CommonJS build may come as the default export only.
    const api = typeof mod.trace?.getTracer === 'function' ? mod : mod.default;
    return api && typeof api.trace?.getTracer === 'function' && typeof api.isSpanContextValid === 'function'
      && api.context && api.SpanStatusCode ? api as Api : null;
  } catch {
    return null;
  }
}

const HEADER_SAFE = /^[\x20-\x7e]{1,512}$/;

/**
 * The headers to submit a request with: the caller's trace context if it gave one, else the
 * current OpenTelemetry span's (so that the submitting call's context is what gets stored), else
 * none. A value that cannot be an HTTP header is dropped: tracing never fails a submission.
 */
export async function traceHeaders(given: TraceContext): Promise<Record<string, string> | undefined> {
  let traceparent = given.traceparent;
  let tracestate = given.tracestate;
  if (traceparent === undefined) {
    const api = loaded === undefined ? await otel() : loaded;
    const current = api?.trace.getSpanContext(api.context.active());
    if (!api || !current || !api.isSpanContextValid(current)) return undefined;
    traceparent = `00-${current.traceId}-${current.spanId}-${(current.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
    tracestate = current.traceState?.serialize() || undefined;
  }
  if (!HEADER_SAFE.test(traceparent)) return undefined;
  const headers: Record<string, string> = { traceparent };
  if (tracestate !== undefined && HEADER_SAFE.test(tracestate)) headers.tracestate = tracestate;
  return headers;
}

/** Copies `traceparent` / `tracestate` from an answer onto `target`, when they are strings. */
export function copyTrace<T extends object>(target: T, source: object): T & TraceContext {
  const out = target as T & TraceContext;
  const from = source as Record<string, unknown>;
  if (typeof from.traceparent === 'string') out.traceparent = from.traceparent;
  if (typeof from.tracestate === 'string') out.tracestate = from.tracestate;
  return out;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** The remote span context of a W3C traceparent, or undefined when it is not a valid one. */
function remoteContext(api: Api, trace: TraceContext): SpanContext | undefined {
  const match = trace.traceparent === undefined ? null : TRACEPARENT.exec(trace.traceparent);
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match;
  // Version 00 has exactly four fields; a later version may add fields, ff is never valid.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  const context: SpanContext = { traceId: traceId!, spanId: spanId!, traceFlags: parseInt(flags!, 16), isRemote: true };
  if (trace.tracestate && api.createTraceState) {
    try {
      context.traceState = api.createTraceState(trace.tracestate);
    } catch {
      // An unreadable tracestate still leaves a usable link.
    }
  }
  return api.isSpanContextValid(context) ? context : undefined;
}

/**
 * Runs `fn` inside a `baton.work` span when the application has OpenTelemetry: current while it
 * runs (the application's own spans nest under it), with one link per handed-out request that
 * carries a valid traceparent, and the error recorded if `fn` throws. Never a payload, result or
 * token in an attribute. Without OpenTelemetry, just `fn()`.
 */
export function inWorkSpan<T>(api: Api | null, attributes: Record<string, AttributeValue>,
  traces: readonly TraceContext[], fn: () => Promise<T>): Promise<T> {
  if (!api) return fn();
  const links: { context: SpanContext }[] = [];
  for (const trace of traces) {
    const context = remoteContext(api, trace);
    if (context) links.push({ context });
  }
  return api.trace.getTracer('baton').startActiveSpan('baton.work', { links, attributes }, async (span) => {
    try {
      return await fn();
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: api.SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}
