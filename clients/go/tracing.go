package baton

// The trace context hooks (part of the transport: Options carries them). Uses no other part.

import "context"

// WorkSpanName is the name to give the span of the holder's work (see Tracing.StartWork).
const WorkSpanName = "baton.work"

// Tracing connects the client to the application's tracer. The client has no tracing
// dependency of its own (standard library only), so an application with OpenTelemetry fills
// these hooks in with a few lines of its own (the README has them ready to paste). Nil hooks:
// no trace context is sent unless a call names one, and the handler runs as it is.
type Tracing struct {
	// Inject returns the W3C trace context ("00-<trace-id>-<span-id>-<flags>" and the
	// tracestate, "" for none) of ctx's current span. Acquire, Run and AwaitTurn send it as the
	// traceparent and tracestate headers when the call names none, so the service stores the
	// submitting call's context with the request.
	Inject func(ctx context.Context) (traceparent, tracestate string)
	// StartWork starts the span of one holding's work (name WorkSpanName) around the handler:
	// Run, RunClaims. The handler gets the returned context, which must be derived from ctx (it
	// is cancelled when the lock is lost), so the application's own spans nest under the work
	// span; end is called with the handler's error (nil on success, a panic as an error) as
	// soon as the handler returns.
	StartWork func(ctx context.Context, work WorkSpan) (_ context.Context, end func(err error))
}

// WorkSpan describes one holding's work to Tracing.StartWork. It never carries a payload, a
// result or the token.
type WorkSpan struct {
	Lcid      string
	RequestID string // the first request's id
	Fence     int64
	BatchSize int // how many requests the handler is given (1 unless Take > 1)
	// Links has one entry per handed-out request that carries a valid traceparent, in the
	// order of the requests: link the span to each.
	Links []TraceLink
}

// TraceLink is the W3C trace context a request was submitted with.
type TraceLink struct {
	RequestID   string
	TraceParent string
	TraceState  string
}

type traceKey struct{}

type traceContext struct{ parent, state string }

// WithTraceContext returns a ctx whose calls that submit a request (Acquire, Run, AwaitTurn,
// LockAll) send this W3C trace context, for a caller that has one by hand rather than from a
// tracer; it takes precedence over Tracing.Inject, and AcquireRequest.TraceParent or
// RunOptions.TraceParent over it.
func WithTraceContext(ctx context.Context, traceparent, tracestate string) context.Context {
	return context.WithValue(ctx, traceKey{}, traceContext{traceparent, tracestate})
}

// outgoing is the trace context an acquire sends: the call's own (tp, ts), else ctx's, else
// the Inject hook's. A tracestate without a traceparent is dropped (the service would too).
func (tr Tracing) outgoing(ctx context.Context, tp, ts string) (string, string) {
	if tp == "" {
		if v, ok := ctx.Value(traceKey{}).(traceContext); ok {
			tp, ts = v.parent, v.state
		} else if tr.Inject != nil {
			tp, ts = tr.Inject(ctx)
		}
	}
	if tp == "" {
		return "", ""
	}
	return tp, ts
}

// start calls the StartWork hook, if there is one; the returned end is never nil. Only links
// with a valid traceparent reach the hook.
func (tr Tracing) start(ctx context.Context, ws WorkSpan) (context.Context, func(error)) {
	noop := func(error) {}
	if tr.StartWork == nil {
		return ctx, noop
	}
	valid := ws.Links[:0:0]
	for _, l := range ws.Links {
		if validTraceParent(l.TraceParent) {
			valid = append(valid, l)
		}
	}
	ws.Links = valid
	hctx, end := tr.StartWork(ctx, ws)
	if hctx == nil {
		hctx = ctx
	}
	if end == nil {
		end = noop
	}
	return hctx, end
}

// validTraceParent checks a traceparent by the W3C rules, so that the hook is only handed
// contexts a tracer can link to: version-traceid-parentid-flags in lowercase hex, version not
// ff, ids not all zeros, and for version 00 nothing after the flags (a later version may
// append fields after a '-').
func validTraceParent(s string) bool {
	if len(s) < 55 || (len(s) > 55 && (s[:2] == "00" || s[55] != '-')) {
		return false
	}
	if s[2] != '-' || s[35] != '-' || s[52] != '-' || s[:2] == "ff" {
		return false
	}
	hex := func(part string) (ok, nonZero bool) {
		for i := 0; i < len(part); i++ {
			ch := part[i]
			if !(ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'f') {
				return false, false
			}
			if ch != '0' {
				nonZero = true
			}
		}
		return true, nonZero
	}
	okV, _ := hex(s[:2])
	okT, nzT := hex(s[3:35])
	okP, nzP := hex(s[36:52])
	okF, _ := hex(s[53:55])
	return okV && okT && nzT && okP && nzP && okF
}
