package baton

import (
	"context"
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
// An error (or a panic) aborts the work with requeue, so that it is tried again. With
// Tracing.StartWork set, ctx carries the work span the hook started.
type Handler func(ctx context.Context, w *Work) (any, error)

// RunOptions configures Run. Zero values mean the defaults.
type RunOptions struct {
	RequestID string // default: a fresh random id
	Payload   any
	LeaseMs   int // default 30000
	Take      int // batch handoff: requests per NEXT (1 to 100), default 1
	// OnSubmit, if set, is called with the acquire's answer before any handler runs: the
	// moment the submission was acknowledged.
	OnSubmit func(Outcome)
	// TraceParent and TraceState: the W3C trace context to submit the request with (see
	// AcquireRequest.TraceParent); "" means ctx's, else the Tracing.Inject hook's, else none.
	TraceParent, TraceState string
}

// RunReport is what one Run did.
type RunReport struct {
	Status   string   // "QUEUED" (another holder does the request) or "RELEASED"
	Position int      // when QUEUED
	Handled  []string // the requestIds whose work this call completed, in order
}

// Run submits a request on lcid and, whenever it holds the lock, runs handler on the work,
// heartbeating in the background every lease/3, and completes with its result, until
// RELEASED. QUEUED returns at once: the request is stored and the holder does it.
//
// Errors: a handler error (the work was aborted with requeue) is a *HandlerError; a lost lock
// is a *LockLostError (errors.Is(err, ErrLockLost)), the work is then never completed by this
// call; a call that failed after its retries returns that error. The report is always set.
func (c *Client) Run(ctx context.Context, lcid string, handler Handler, opts RunOptions) (*RunReport, error) {
	if opts.RequestID == "" {
		opts.RequestID = NewRequestID()
	}
	if opts.LeaseMs <= 0 {
		opts.LeaseMs = 30000
	}
	req := AcquireRequest{RequestID: opts.RequestID, Payload: opts.Payload, LeaseMs: opts.LeaseMs,
		TraceParent: opts.TraceParent, TraceState: opts.TraceState}
	if opts.Take > 1 {
		req.Take = opts.Take
	}
	report := &RunReport{}
	o, sentAt, err := c.acquire(ctx, lcid, req)
	if err != nil {
		return report, err
	}
	if opts.OnSubmit != nil {
		opts.OnSubmit(o)
	}
	own := Item{RequestID: opts.RequestID, Attempt: 1}
	if opts.Payload != nil {
		if raw, err := marshalRaw(opts.Payload); err == nil {
			own.Payload = raw
		}
	}
	return report, c.holdLoop(ctx, lcid, o, sentAt, own, handler, opts.LeaseMs, opts.Take, report)
}

// holdLoop is the holder loop of the protocol from the answer o (sent at sentAt).
func (c *Client) holdLoop(ctx context.Context, lcid string, o Outcome, sentAt time.Time, own Item,
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
			report.Status = "RELEASED"
			return nil
		case *Acquired:
			token, lease = v.Token, pick(v.LeaseMs, leaseMs)
			// What the service stored, not what this call sent: a repeat keeps the first submission's.
			own.TraceParent, own.TraceState = v.TraceParent, v.TraceState
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
		k := c.startKeeper(ctx, lcid, token, lease, sentAt)
		hctx, endSpan := c.startWork(k.ctx, &work)
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
				return &LockLostError{Lcid: lcid, Cause: aerr}
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
		next, nsent, err := c.complete(ctx, lcid, creq)
		if err != nil {
			if errors.Is(err, ErrLockLost) {
				return &LockLostError{Lcid: lcid, Cause: err}
			}
			return err
		}
		report.Handled = append(report.Handled, ids...)
		o, sentAt = next, nsent
	}
}

func pick(v, dflt int) int {
	if v > 0 {
		return v
	}
	return dflt
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
	c       *Client
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

// startKeeper begins heartbeating a holding renewed at sentAt with the given lease.
func (c *Client) startKeeper(parent context.Context, lcid, token string, leaseMs int, sentAt time.Time) *keeper {
	ctx, cancel := context.WithCancel(parent)
	lease := time.Duration(leaseMs) * time.Millisecond
	k := &keeper{c: c, lcid: lcid, token: token, lease: lease, ctx: ctx, cancel: cancel,
		quit: make(chan struct{}), done: make(chan struct{}), expires: sentAt.Add(lease)}
	go k.loop()
	return k
}

func (k *keeper) loop() {
	defer close(k.done)
	interval := k.lease / 3
	k.mu.Lock()
	next := k.expires.Add(-k.lease).Add(interval) // lease/3 after the renewal that started it
	k.mu.Unlock()
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
			k.markLost(fmt.Errorf("no heartbeat renewed the lease before the holder's deadline"))
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
			if errors.Is(err, ErrLockLost) || !retryable(err) || !time.Now().Before(expires) {
				k.markLost(err)
				return
			}
			k.c.log.Printf("baton: heartbeat on %s failed, retrying: %v", k.lcid, err)
			next = time.Now().Add(k.c.opts.BackoffBase)
			continue
		}
		k.mu.Lock()
		if a.LeaseMs > 0 {
			k.lease = time.Duration(a.LeaseMs) * time.Millisecond
		}
		k.expires = sentAt.Add(k.lease)
		k.mu.Unlock()
		next = sentAt.Add(k.lease / 3)
	}
}

func (k *keeper) markLost(cause error) {
	k.mu.Lock()
	if k.lost == nil {
		k.lost = &LockLostError{Lcid: k.lcid, Cause: cause}
	}
	k.mu.Unlock()
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
	defer k.mu.Unlock()
	if k.lost == nil && !time.Now().Before(k.expires) {
		k.lost = &LockLostError{Lcid: k.lcid, Cause: fmt.Errorf("the lease ran out before the work was done")}
	}
	k.cancel()
	return k.lost
}
