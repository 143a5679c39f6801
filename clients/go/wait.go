package baton

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// maxWaitMs is the service's long-poll cap.
const maxWaitMs = 30000

// Turn is a wait-mode request's turn, picked up and heartbeated in the background until
// Complete or Abort. Context() is cancelled when the lock is lost.
type Turn struct {
	c         *Client
	Lcid      string
	RequestID string
	Fence     int64
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
			return nil, &LockLostError{Lcid: t.Lcid, Cause: err}
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
// turn up and returns it heartbeating. timeout 0 means no limit but ctx. On timeout the
// request is withdrawn (or, if its turn was just granted, picked up and aborted) and the
// error matches ErrTimeout.
func (c *Client) AwaitTurn(ctx context.Context, lcid, requestID string, payload any, leaseMs int, timeout time.Duration) (*Turn, error) {
	if requestID == "" {
		requestID = NewRequestID()
	}
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	req := AcquireRequest{RequestID: requestID, Payload: payload, LeaseMs: leaseMs, Mode: "wait"}
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
		o, sentAt, err := c.acquire(cctx, lcid, req)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				c.giveUpTurn(lcid, req)
			}
			return nil, err
		}
		switch v := o.(type) {
		case *Acquired:
			// A held call picked the turn up somewhere between its send and its answer; the lease
			// counts from the pick-up. Counting it from the send time is safe but, after a long
			// hold, leaves nothing: renew at once then, and count from that heartbeat.
			lease := time.Duration(pick(v.LeaseMs, pick(leaseMs, 30000))) * time.Millisecond
			if time.Since(sentAt) > lease/3 {
				a, hsent, err := c.heartbeat(ctx, lcid, v.Token, 0, time.Time{})
				if err != nil {
					if errors.Is(err, ErrLockLost) {
						return nil, &LockLostError{Lcid: lcid, Cause: err}
					}
					return nil, err
				}
				v.LeaseMs, sentAt = a.LeaseMs, hsent
			}
			return c.newTurn(lcid, requestID, v, sentAt, leaseMs), nil
		case *Queued:
			continue
		default:
			return nil, fmt.Errorf("baton: a wait request's acquire answered %s", o.Status())
		}
	}
}

func (c *Client) newTurn(lcid, requestID string, a *Acquired, sentAt time.Time, leaseMs int) *Turn {
	k := c.startKeeper(context.Background(), lcid, a.Token, pick(a.LeaseMs, pick(leaseMs, 30000)), sentAt)
	return &Turn{c: c, Lcid: lcid, RequestID: requestID, Fence: a.Fence, TraceParent: a.TraceParent,
		TraceState: a.TraceState, token: a.Token, k: k}
}

// giveUpTurn withdraws a waiting request; if its turn was granted meanwhile (NOT_QUEUED),
// it picks the turn up and aborts it, so the lock moves on at once instead of after the
// pick-up window. It returns the timeout error.
func (c *Client) giveUpTurn(lcid string, req AcquireRequest) error {
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.RetryTimeout)
	defer cancel()
	terr := &TimeoutError{Op: "AwaitTurn", Lcid: lcid, RequestID: req.RequestID}
	_, err := c.Withdraw(ctx, lcid, req.RequestID, "await_turn timed out")
	if err == nil || !errors.Is(err, ErrNotQueued) {
		return terr
	}
	req.WaitMs = 0
	o, err := c.Acquire(ctx, lcid, req)
	if a, ok := o.(*Acquired); ok && err == nil {
		if _, err := c.Abort(ctx, lcid, AbortRequest{RequestID: req.RequestID, Token: a.Token, Reason: "await_turn timed out"}); err != nil {
			c.log.Printf("baton: abort of a timed-out turn on %s failed: %v", lcid, err)
		}
	}
	return terr
}

// AwaitResult long-polls the request view until the request has ended (DONE, ABORTED, DEAD)
// and returns that view. timeout 0 means no limit but ctx; on timeout the error matches
// ErrTimeout and the last view is returned with it.
func (c *Client) AwaitResult(ctx context.Context, lcid, requestID string, timeout time.Duration) (*RequestView, error) {
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
