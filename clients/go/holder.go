package baton

// The holder: Run, the holder loop, and the lease it keeps with background heartbeats. Uses
// the calls (calls.go) and what they use.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"
)

// Work is what a handler is given: the lcid, the fence of this grant or handoff (pass it to
// your database, which refuses lower fences), and the request(s): one, or a batch under one
// fence when Take > 1.
type Work struct {
	Lcid     string
	Fence    int64
	Requests []Item
}

// Request is the first (for Take 1 the only) request of the work.
func (w *Work) Request() Item { return w.Requests[0] }

// Handler does the work. Its ctx is cancelled when the lock is lost (a heartbeat answered
// LOCK_LOST or the holder's own lease deadline passed): stop writing then. The result is the
// request's result; for a batch of more than one, return a map from requestId to result
// (map[string]any, or any map with string keys; a missing requestId completes with no result).
// An error (or a panic) aborts the work with requeue: it goes back to the head of its lcid with
// no holder, and a claim poller (or the next acquire on that lcid) does it again; the service
// dead-letters it after maxAttempts. With Tracing.StartWork set, ctx carries the work span the
// hook started.
type Handler func(ctx context.Context, w *Work) (any, error)

// Submitted is what RunOptions.OnSubmit is given: the request Baton acknowledged as stored.
type Submitted struct {
	Lcid      string
	RequestID string // this caller's, also when Run generated it
	// Outcome is the acquire's answer: *Acquired, *Next (it rescued a queue with no holder)
	// or *Queued. Nil on the duplicate path: the acquire was sent more than once and answered
	// DUPLICATE_REQUEST, so an earlier attempt stored it and another holder took it since.
	Outcome Outcome
}

// RunOptions configures Run. Zero values mean the defaults.
type RunOptions struct {
	RequestID string // default: a fresh random id
	Payload   any
	LeaseMs   int // default 30000
	Take      int // batch handoff: requests per NEXT (1 to 100), default 1
	// OnSubmit, if set, is called exactly once, as soon as Baton acknowledged the request as
	// stored and before any handler runs. A caller that must not lose track of a request across
	// its own crash journals it there.
	OnSubmit func(Submitted)
	// TraceParent and TraceState: the W3C trace context to submit the request with (see
	// AcquireRequest.TraceParent); "" means ctx's, else the Tracing.Inject hook's, else none.
	TraceParent, TraceState string
}

// RunReport is what one Run did. Run returns it also with an error: what was handled until then.
type RunReport struct {
	// Status: "QUEUED" (stored; another holder or a claim poller does it) or "RELEASED" (this
	// call held the lock until it had nothing more to do); "" when Run failed before either.
	Status    string
	Lcid      string
	RequestID string // this caller's request, also when Run generated it
	Position  int    // QUEUED: the position in the queue, 0 when unknown
	// Handled: the requestIds this call's handler ran for and completed, in order.
	Handled []string
	// Released is the RELEASED answer (Pending, PassedTo), nil unless Status is RELEASED.
	Released *Released
	// HandledOwn: this caller's own request is among Handled. RELEASED does not mean it is: the
	// lock can pass to a wait request queued ahead of it (Released.PassedTo), and the request
	// is then done later by the next holder of the lcid or a claim poller (AwaitResult tells when).
	HandledOwn bool
}

// Run submits a request on lcid and, whenever it holds the lock, runs handler on the work,
// heartbeating in the background every lease/3, and completes with its result, until
// RELEASED. QUEUED returns at once: the request is stored, and the holder of the lcid or a
// claim poller does it. A DUPLICATE_REQUEST (ACTIVE or DONE) to an acquire this call sent more
// than once is QUEUED too (no position): its first attempt stored the request. On a first send
// it is returned: the requestId was used before.
//
// Errors: a handler error is a *HandlerError: the work was aborted with requeue and waits at the
// head of its lcid for a claim poller or the next acquire there (run one: see the README). A
// lost lock is a *LockLostError (errors.Is(err, ErrLockLost)); the work is then never completed
// by this call. A call that failed after its retries returns that error. The report is always
// set, with what was handled until the error.
func (c *calls) Run(ctx context.Context, lcid string, handler Handler, opts RunOptions) (*RunReport, error) {
	if opts.RequestID == "" {
		opts.RequestID = NewRequestID()
	}
	if opts.LeaseMs <= 0 {
		opts.LeaseMs = 30000
	}
	report := &RunReport{Lcid: lcid, RequestID: opts.RequestID}
	req := AcquireRequest{RequestID: opts.RequestID, Payload: opts.Payload, LeaseMs: opts.LeaseMs,
		TraceParent: opts.TraceParent, TraceState: opts.TraceState}
	if opts.Take > 1 {
		req.Take = opts.Take
	}
	submitted := func(o Outcome) {
		if opts.OnSubmit != nil {
			opts.OnSubmit(Submitted{Lcid: lcid, RequestID: opts.RequestID, Outcome: o})
		}
	}
	o, rep, err := c.acquire(ctx, lcid, req)
	if err != nil {
		var p *ProblemError
		if rep.uncertain > 0 && errors.As(err, &p) && p.Code == "DUPLICATE_REQUEST" && (p.State == "ACTIVE" || p.State == "DONE") {
			// An earlier attempt of this very call stored the request and its answer was lost;
			// another holder took it since (ACTIVE) or already did it (DONE).
			report.Status = "QUEUED"
			submitted(nil)
			return report, nil
		}
		return report, err
	}
	submitted(o)
	own := Item{RequestID: opts.RequestID, Attempt: 1}
	if opts.Payload != nil {
		if raw, err := marshalRaw(opts.Payload); err == nil {
			own.Payload = raw
		}
	}
	err = c.holdLoop(ctx, lcid, o, rep.firstSent, own, handler, opts.LeaseMs, opts.Take, report)
	for _, id := range report.Handled {
		if id == opts.RequestID {
			report.HandledOwn = true
		}
	}
	return report, err
}

func marshalRaw(v any) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		return raw, nil
	}
	return json.Marshal(v)
}

// holdLoop is the holder loop of the protocol from the answer o, whose lease counts from
// renewed. It records what it does in report (Status, Position, Released, Handled).
func (c *calls) holdLoop(ctx context.Context, lcid string, o Outcome, renewed time.Time, own Item,
	handler Handler, leaseMs, take int, report *RunReport) error {
	for {
		var work Work
		var token string
		lease := leaseMs
		switch v := o.(type) {
		case *Queued:
			report.Status, report.Position = "QUEUED", v.Position
			return nil
		case *Released:
			report.Status, report.Released = "RELEASED", v
			return nil
		case *Acquired:
			token, lease = v.Token, pick(v.LeaseMs, leaseMs)
			// What the service stored, not what this call sent: a repeat keeps the first submission's.
			own.TraceParent, own.TraceState, own.Attempt = v.TraceParent, v.TraceState, v.Attempt
			work = Work{Lcid: lcid, Fence: v.Fence, Requests: []Item{own}}
		case *Next:
			token, lease = v.Token, pick(v.LeaseMs, leaseMs)
			work = Work{Lcid: lcid, Fence: v.Fence, Requests: v.items()}
		default:
			return fmt.Errorf("baton: unexpected outcome %T", o)
		}
		ids := make([]string, len(work.Requests))
		for i, it := range work.Requests {
			ids[i] = it.RequestID
		}
		k := c.startKeeper(ctx, lcid, token, lease, renewed)
		hctx, endSpan := c.opts.Tracing.start(k.ctx, workSpan(&work))
		result, herr := callHandler(hctx, handler, &work)
		endSpan(herr)
		if lost := k.stop(); lost != nil {
			return lost
		}
		if herr != nil {
			// A caller who cancelled ctx still wants the work given back: abort on a fresh context.
			actx, cancel := context.WithTimeout(context.Background(), c.opts.RetryTimeout)
			_, aerr := c.Abort(actx, lcid, AbortRequest{RequestID: ids[0], Token: token, Requeue: true, Reason: herr.Error()})
			cancel()
			if aerr != nil && errors.Is(aerr, ErrLockLost) {
				return serviceLockLost(lcid, aerr)
			}
			if aerr != nil {
				c.log.Printf("baton: abort of %s %v after a handler error failed: %v", lcid, ids, aerr)
			}
			return &HandlerError{Lcid: lcid, RequestIDs: ids, Err: herr}
		}
		if err := ctx.Err(); err != nil {
			// Cancelled by the caller after the handler returned: give the work back, complete nothing.
			actx, cancel := context.WithTimeout(context.Background(), c.opts.RetryTimeout)
			c.Abort(actx, lcid, AbortRequest{RequestID: ids[0], Token: token, Requeue: true, Reason: "cancelled by the caller"})
			cancel()
			return err
		}
		creq := CompleteRequest{Token: token}
		if take > 1 {
			creq.Take = take
		}
		if len(ids) == 1 {
			creq.RequestID, creq.Result = ids[0], result
		} else {
			results := resultsByID(result)
			for _, id := range ids {
				creq.Completed = append(creq.Completed, Completion{RequestID: id, Result: results[id]})
			}
		}
		next, firstSent, err := c.complete(ctx, lcid, creq)
		if err != nil {
			if errors.Is(err, ErrLockLost) {
				return serviceLockLost(lcid, err)
			}
			return err
		}
		report.Handled = append(report.Handled, ids...)
		o, renewed = next, firstSent
	}
}

func pick(v, dflt int) int {
	if v > 0 {
		return v
	}
	return dflt
}

// workSpan describes work to the StartWork hook: every request's trace context, never a
// payload, a result or the token.
func workSpan(work *Work) WorkSpan {
	ws := WorkSpan{Lcid: work.Lcid, Fence: work.Fence, BatchSize: len(work.Requests)}
	if len(work.Requests) > 0 {
		ws.RequestID = work.Requests[0].RequestID
	}
	for _, it := range work.Requests {
		ws.Links = append(ws.Links, TraceLink{RequestID: it.RequestID, TraceParent: it.TraceParent, TraceState: it.TraceState})
	}
	return ws
}

// callHandler runs the handler, turning a panic into an error so that the work is aborted
// (and requeued) instead of staying held until its lease runs out.
func callHandler(ctx context.Context, h Handler, w *Work) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panic: %v", p)
		}
	}()
	return h(ctx, w)
}

// resultsByID reads a batch handler's map with string keys.
func resultsByID(result any) map[string]any {
	out := map[string]any{}
	if result == nil {
		return out
	}
	if m, ok := result.(map[string]any); ok {
		return m
	}
	v := reflect.ValueOf(result)
	if v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String {
		for _, k := range v.MapKeys() {
			out[k.String()] = v.MapIndex(k).Interface()
		}
	}
	return out
}

// keeper heartbeats one holding in the background and cancels its ctx when the lock is lost.
type keeper struct {
	c       *calls
	lcid    string
	token   string
	lease   time.Duration
	ctx     context.Context
	cancel  context.CancelFunc
	quit    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	expires time.Time // the holder's own deadline: send time of the last renewal + lease
	lost    error
}

// startKeeper begins heartbeating a holding renewed at renewed with the given lease.
func (c *calls) startKeeper(parent context.Context, lcid, token string, leaseMs int, renewed time.Time) *keeper {
	ctx, cancel := context.WithCancel(parent)
	lease := time.Duration(leaseMs) * time.Millisecond
	k := &keeper{c: c, lcid: lcid, token: token, lease: lease, ctx: ctx, cancel: cancel,
		quit: make(chan struct{}), done: make(chan struct{}), expires: renewed.Add(lease)}
	go k.loop()
	return k
}

func (k *keeper) loop() {
	defer close(k.done)
	interval := k.lease / 3
	k.mu.Lock()
	next := k.expires.Add(-k.lease).Add(interval) // lease/3 after the renewal that started it
	k.mu.Unlock()
	failures := 0
	var lastErr error
	for {
		k.mu.Lock()
		expires := k.expires
		k.mu.Unlock()
		wake := next
		if expires.Before(wake) {
			wake = expires
		}
		t := time.NewTimer(time.Until(wake))
		select {
		case <-k.quit:
			t.Stop()
			return
		case <-k.ctx.Done():
			// The caller cancelled Run's context: not a lost lock; holdLoop gives the work back.
			t.Stop()
			return
		case <-t.C:
		}
		if !time.Now().Before(expires) {
			k.markLost(&LockLostError{Lcid: k.lcid, ByClient: true, Cause: lastErr})
			return
		}
		// Retries of this heartbeat stop at the holder's own deadline.
		hctx, hcancel := context.WithCancel(k.ctx)
		go func() {
			select {
			case <-k.quit:
				hcancel()
			case <-hctx.Done():
			}
		}()
		a, sentAt, err := k.c.heartbeat(hctx, k.lcid, k.token, 0, expires)
		hcancel()
		select {
		case <-k.quit:
			return
		default:
		}
		if err != nil {
			if errors.Is(err, ErrLockLost) {
				k.markLost(serviceLockLost(k.lcid, err))
				return
			}
			// Anything else may pass (a stall, a proxy's error page): go on until the deadline.
			lastErr = err
			if !time.Now().Before(expires) {
				k.markLost(&LockLostError{Lcid: k.lcid, ByClient: true, Cause: err})
				return
			}
			k.c.log.Printf("baton: heartbeat on %s failed, retrying until the holder's deadline (%s from now): %v",
				k.lcid, time.Until(expires).Round(time.Millisecond), err)
			next = time.Now().Add(k.c.jitter.backoff(failures, k.c.opts.BackoffBase, k.c.opts.BackoffCap, 0))
			failures++
			continue
		}
		failures, lastErr = 0, nil
		k.mu.Lock()
		if a.LeaseMs > 0 {
			k.lease = time.Duration(a.LeaseMs) * time.Millisecond
		}
		k.expires = sentAt.Add(k.lease)
		k.mu.Unlock()
		next = sentAt.Add(k.lease / 3)
	}
}

// markLost records the loss, says in the log who decided, and cancels the handler's ctx.
func (k *keeper) markLost(lost *LockLostError) {
	k.mu.Lock()
	first := k.lost == nil
	if first {
		k.lost = lost
	}
	k.mu.Unlock()
	if first {
		if lost.ByClient {
			k.c.log.Printf("baton: warning: lock lost on %s, detected by the client: its lease deadline passed with no renewal; "+
				"the handler is cancelled and nothing is completed", k.lcid)
		} else {
			k.c.log.Printf("baton: warning: lock lost on %s: the service answered LOCK_LOST; the handler is cancelled "+
				"and nothing is completed", k.lcid)
		}
	}
	k.cancel()
}

// stop ends the heartbeats and reports the lock lost if it was, or if the holder's own
// deadline has passed meanwhile (then completing would be a write without the lock).
func (k *keeper) stop() error {
	select {
	case <-k.quit:
	default:
		close(k.quit)
	}
	<-k.done
	k.mu.Lock()
	expired := k.lost == nil && !time.Now().Before(k.expires)
	k.mu.Unlock()
	if expired {
		k.markLost(&LockLostError{Lcid: k.lcid, ByClient: true})
	}
	k.cancel()
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.lost == nil {
		return nil
	}
	return k.lost
}
