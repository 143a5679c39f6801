package baton

// LockAll: wait-mode turns on several lcids in one global order (part of wait mode, with
// wait.go).

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// LockAllOptions configures LockAll.
type LockAllOptions struct {
	LeaseMs int           // lease of each turn, default 30000
	Timeout time.Duration // for taking all the turns; 0 means no limit but ctx
}

// LockAllHandler works while every lock is held. fences maps each lcid to its fence; ctx is
// cancelled as soon as any of the locks is lost.
type LockAllHandler func(ctx context.Context, fences map[string]int64) error

// LockAll takes a wait-mode turn on each lcid (duplicates removed) in sorted byte order, one
// global order so that two callers never wait for each other in a cycle, holds them all with
// heartbeats, runs handler with every fence, and completes the turns in reverse order. It gives
// up as a whole on any failure (a turn not had in time, a failed call, the handler's error, a
// lost lock): it aborts, without requeue, the turns it holds, withdraws the one it waited for,
// and returns the error.
//
// Each lock is still its own: nothing is atomic across lcids. Make the writes to all entities
// in one database transaction fenced with every fence, or make them safe to redo.
//
// Handoff requests (Run) on the same lcids queue like everyone else's: after a turn, one at the
// head waits for a claim poller, and every later LockAll waits behind it. Run a claim poller
// (RunClaims) when LockAll and Run share lcids.
func (c *calls) LockAll(ctx context.Context, lcids []string, handler LockAllHandler, opts LockAllOptions) error {
	seen := map[string]bool{}
	var order []string
	for _, l := range lcids {
		if !seen[l] {
			seen[l] = true
			order = append(order, l)
		}
	}
	sort.Strings(order) // Go compares strings by their bytes: the UTF-8 byte order
	if opts.LeaseMs <= 0 {
		opts.LeaseMs = 30000
	}
	var deadline time.Time
	if opts.Timeout > 0 {
		deadline = time.Now().Add(opts.Timeout)
	}
	var held []*Turn
	release := func() {
		actx, cancel := context.WithTimeout(context.Background(), c.opts.RetryTimeout)
		defer cancel()
		for i := len(held) - 1; i >= 0; i-- {
			if _, err := held[i].Abort(actx, false, "lock_all failed"); err != nil && !errors.Is(err, ErrLockLost) {
				c.log.Printf("baton: lock_all: abort on %s failed: %v", held[i].Lcid, err)
			}
		}
	}
	for _, l := range order {
		var left time.Duration
		if !deadline.IsZero() {
			if left = time.Until(deadline); left <= 0 {
				release()
				return &TimeoutError{Op: "LockAll", Lcid: l}
			}
		}
		id := NewRequestID()
		t, err := c.AwaitTurn(ctx, l, id, nil, opts.LeaseMs, left)
		if err != nil {
			if !errors.Is(err, ErrTimeout) && ctx.Err() == nil {
				// AwaitTurn keeps a wait's place on a failed call; LockAll gives up as a whole.
				c.withdrawWait(l, AcquireRequest{RequestID: id, LeaseMs: opts.LeaseMs, Mode: "wait"}, "lock_all failed")
			}
			release()
			return err
		}
		held = append(held, t)
	}
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	watchDone := make(chan struct{})
	fences := make(map[string]int64, len(held))
	for _, t := range held {
		fences[t.Lcid] = t.Fence
		wg.Add(1)
		go func(t *Turn) {
			defer wg.Done()
			select {
			case <-t.Context().Done():
				cancel()
			case <-watchDone:
			}
		}(t)
	}
	herr := callLockAllHandler(hctx, handler, fences)
	close(watchDone)
	wg.Wait()
	if herr != nil {
		release()
		return herr
	}
	for _, t := range held { // a lost lock: complete nothing, give the rest back
		if t.k.ctx.Err() != nil {
			if lost := t.k.stop(); lost != nil {
				release()
				return lost
			}
		}
	}
	cctx, ccancel := context.WithTimeout(context.Background(), c.opts.RetryTimeout)
	defer ccancel()
	for i := len(held) - 1; i >= 0; i-- {
		if _, err := held[i].Complete(cctx, nil); err != nil {
			held = held[:i]
			release()
			return err
		}
	}
	return nil
}

func callLockAllHandler(ctx context.Context, h LockAllHandler, fences map[string]int64) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panic: %v", p)
		}
	}()
	return h(ctx, fences)
}
