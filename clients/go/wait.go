package baton

// Wait mode: AwaitTurn and its Turn, AwaitResult (and LockAll, in lockall.go). Uses the holder's
// lease keeper (holder.go) and the calls.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// maxWaitMs is the service's long-poll cap.
const maxWaitMs = 30000

// whoRescuesWhat is the page that says who does a request nobody holds.
const whoRescuesWhat = "docs/claims-and-dead-letters.md#who-rescues-what"

// Turn is a wait-mode request's turn, picked up and heartbeated in the background until
// Complete or Abort. Context() is cancelled when the lock is lost.
type Turn struct {
	c         *calls
	Lcid      string
	RequestID string
	Fence     int64
	// Attempt: which attempt of the request this turn is (from ACQUIRED, protocol v1.2; 1 from
	// an older service). More than 1: the work is being redone (an earlier turn was aborted
	// with requeue, or its holder's lease ran out).
	Attempt int
	// TraceParent and TraceState: the W3C trace context the request was submitted with ("" when none).
	TraceParent, TraceState string

	token    string
	k        *keeper
	once     sync.Once
	finished bool
	mu       sync.Mutex
}

// Context is cancelled when the turn's lock is lost (or the turn finished).
func (t *Turn) Context() context.Context { return t.k.ctx }

// Complete finishes the request with result and hands the lock on. A lost lock is a
// *LockLostError and nothing is completed.
func (t *Turn) Complete(ctx context.Context, result any) (*Released, error) {
	if err := t.finish(); err != nil {
		return nil, err
	}
	o, err := t.c.Complete(ctx, t.Lcid, CompleteRequest{Token: t.token, RequestID: t.RequestID, Result: result})
	if err != nil {
		if errors.Is(err, ErrLockLost) {
			return nil, serviceLockLost(t.Lcid, err)
		}
		return nil, err
	}
	r, ok := o.(*Released)
	if !ok {
		return nil, fmt.Errorf("baton: a wait holder's complete answered %s", o.Status())
	}
	return r, nil
}

// Abort gives the turn up: with requeue the request goes back to the head (and its turn comes
// again: repeat AwaitTurn to pick it up), else it ends ABORTED.
func (t *Turn) Abort(ctx context.Context, requeue bool, reason string) (*Released, error) {
	t.finish() // a lost lock still deserves the abort attempt: the service answers LOCK_LOST if so
	return t.c.Abort(ctx, t.Lcid, AbortRequest{RequestID: t.RequestID, Token: t.token, Requeue: requeue, Reason: reason})
}

func (t *Turn) finish() error {
	var err error
	t.once.Do(func() { err = t.k.stop() })
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.finished {
		return errors.New("baton: the turn was already completed or aborted")
	}
	t.finished = true
	return err
}

// AwaitTurn submits (or repeats) a wait-mode request and long-polls until its turn, picks the
// turn up and returns it live and heartbeating. timeout 0 means no limit but ctx.
//
// The request keeps its place unless the caller gives up: on its timeout (the error matches
// ErrTimeout) or ctx's end it is withdrawn (a turn granted meanwhile is picked up and aborted).
// Any other failure (a transport error or 503 past the retry deadline, an unexpected answer) is
// returned and the request stays queued: AwaitTurn with the same requestID waits on in the same
// place. While it waits, a lcid found twice in a row with no holder and requests queued is
// logged once (handoff work ahead of the turn waits for a claim poller: see the README).
func (c *calls) AwaitTurn(ctx context.Context, lcid, requestID string, payload any, leaseMs int, timeout time.Duration) (*Turn, error) {
	if requestID == "" {
		requestID = NewRequestID()
	}
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	req := AcquireRequest{RequestID: requestID, Payload: payload, LeaseMs: leaseMs, Mode: "wait"}
	var stranded strandedCheck
	for {
		wait := maxWaitMs
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return nil, c.giveUpTurn(lcid, req)
			}
			if ms := int(left / time.Millisecond); ms < wait {
				wait = ms
			}
		}
		if wait < 1 {
			wait = 1
		}
		req.WaitMs = wait
		cctx, cancel := ctx, context.CancelFunc(func() {})
		if !deadline.IsZero() {
			// Retries of one long-poll may run a little past the timeout; not the caller's ctx.
			cctx, cancel = context.WithDeadline(ctx, deadline.Add(time.Duration(wait)*time.Millisecond+5*time.Second))
		}
		o, rep, err := c.acquire(cctx, lcid, req)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				c.withdrawWait(lcid, req, "await_turn cancelled")
				return nil, err
			}
			if !deadline.IsZero() && !time.Now().Before(deadline) {
				return nil, c.giveUpTurn(lcid, req)
			}
			return nil, err // the request keeps its place
		}
		switch v := o.(type) {
		case *Acquired:
			return c.pickUp(ctx, lcid, requestID, v, rep, leaseMs)
		case *Queued:
			stranded.after(ctx, c, lcid, deadline)
			continue
		default:
			return nil, fmt.Errorf("baton: a wait request's acquire answered %s", o.Status())
		}
	}
}

// pickUp makes the turn of an ACQUIRED answer live. The service started its lease at the
// pick-up, somewhere between the send of the call's first attempt and its answer; counting
// from that send is safe but, after a long hold or a retry, may leave little or nothing. Then
// it renews at once and counts from that heartbeat, so a turn granted after a wait of any
// length can be worked on.
func (c *calls) pickUp(ctx context.Context, lcid, requestID string, a *Acquired, rep reply, leaseMs int) (*Turn, error) {
	answered := time.Now()
	lease := time.Duration(pick(a.LeaseMs, pick(leaseMs, 30000))) * time.Millisecond
	renewed := rep.firstSent
	if answered.Sub(renewed) > lease/3 {
		// The pick-up was at the answer at the latest: its lease ends a lease after that at the latest.
		h, hsent, err := c.heartbeat(ctx, lcid, a.Token, 0, answered.Add(lease))
		if err != nil {
			if errors.Is(err, ErrLockLost) {
				return nil, serviceLockLost(lcid, err)
			}
			if ctx.Err() != nil { // the caller gave up: the turn goes on to the next
				c.withdrawWait(lcid, AcquireRequest{RequestID: requestID, LeaseMs: leaseMs, Mode: "wait"}, "await_turn cancelled")
				return nil, err
			}
			if !time.Now().Before(answered.Add(lease)) {
				return nil, &LockLostError{Lcid: lcid, ByClient: true, Cause: err}
			}
			return nil, err
		}
		a.LeaseMs, renewed = pick(h.LeaseMs, a.LeaseMs), hsent
	}
	k := c.startKeeper(context.Background(), lcid, a.Token, pick(a.LeaseMs, pick(leaseMs, 30000)), renewed)
	return &Turn{c: c, Lcid: lcid, RequestID: requestID, Fence: a.Fence, Attempt: a.Attempt,
		TraceParent: a.TraceParent, TraceState: a.TraceState, token: a.Token, k: k}, nil
}

// strandedCheck reads the lock view after each long-poll that answered QUEUED. Nobody holding
// the lcid while requests are queued, twice in a row, means work nobody will do until a claim
// poller or a new handoff acquire comes: said once per wait. The wait goes on.
type strandedCheck struct {
	inARow int
	warned bool
}

func (s *strandedCheck) after(ctx context.Context, c *calls, lcid string, deadline time.Time) {
	if s.warned {
		return
	}
	read := c.opts.Timeout
	if !deadline.IsZero() && time.Until(deadline) < read {
		read = time.Until(deadline)
	}
	if read <= 0 {
		return
	}
	vctx, cancel := context.WithTimeout(ctx, read)
	v, err := c.Lock(vctx, lcid)
	cancel()
	if err != nil {
		return // nothing learnt: neither a strike nor a clearance
	}
	if v.Held || v.QueueLength == 0 {
		s.inARow = 0
		return
	}
	if s.inARow++; s.inARow >= 2 {
		s.warned = true
		c.log.Printf("baton: warning: waiting for a turn on %s, which nobody holds while %d requests are queued: "+
			"handoff work ahead of the turn (or a requeued request) is done only by a claim poller or the next "+
			"acquire on that lcid; is a claim poller running? See %s", lcid, v.QueueLength, whoRescuesWhat)
	}
}

// giveUpTurn withdraws a waiting request because the caller's timeout ran out, and returns the
// timeout error.
func (c *calls) giveUpTurn(lcid string, req AcquireRequest) error {
	c.withdrawWait(lcid, req, "await_turn timed out")
	return &TimeoutError{Op: "AwaitTurn", Lcid: lcid, RequestID: req.RequestID}
}

// withdrawWait takes a waiting request out of the queue; if its turn was granted meanwhile
// (NOT_QUEUED), it picks the turn up and aborts it, so the lock moves on at once instead of
// after the pick-up window.
func (c *calls) withdrawWait(lcid string, req AcquireRequest, reason string) {
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.RetryTimeout)
	defer cancel()
	_, err := c.Withdraw(ctx, lcid, req.RequestID, reason)
	if err == nil || errors.Is(err, ErrNotFound) {
		return
	}
	if !errors.Is(err, ErrNotQueued) {
		c.log.Printf("baton: withdrawal of %s on %s failed: %v", req.RequestID, lcid, err)
		return
	}
	req.WaitMs = 0
	o, err := c.Acquire(ctx, lcid, req)
	if a, ok := o.(*Acquired); ok && err == nil {
		if _, err := c.Abort(ctx, lcid, AbortRequest{RequestID: req.RequestID, Token: a.Token, Reason: reason}); err != nil {
			c.log.Printf("baton: abort of a given-up turn on %s failed: %v", lcid, err)
		}
	}
}

// AwaitResult long-polls the request view until the request has ended (DONE, ABORTED, DEAD)
// and returns that view. timeout 0 means no limit but ctx; on timeout the error matches
// ErrTimeout and the last view is returned with it.
func (c *calls) AwaitResult(ctx context.Context, lcid, requestID string, timeout time.Duration) (*RequestView, error) {
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	var last *RequestView
	for {
		wait := maxWaitMs
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return last, &TimeoutError{Op: "AwaitResult", Lcid: lcid, RequestID: requestID}
			}
			if ms := int(left / time.Millisecond); ms < wait {
				wait = ms
			}
		}
		if wait < 1 {
			wait = 1
		}
		v, err := c.Request(ctx, lcid, requestID, wait)
		if err != nil {
			return last, err
		}
		last = v
		if v.Ended() {
			return v, nil
		}
	}
}
