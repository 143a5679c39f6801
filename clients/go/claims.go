package baton

import (
	"context"
	"errors"
	"time"
)

// ClaimOptions configures RunClaims. Zero values mean the defaults.
type ClaimOptions struct {
	LcidPrefix string // only lcids that start with it (exact, case-sensitive); "" = any
	LeaseMs    int    // the lease of claimed locks, default 30000
	Take       int    // requests per NEXT, default 1
	// Stop, when closed, ends the poller gracefully: the holder loop in hand runs to its end
	// (cancelling ctx instead cancels the handler too).
	Stop <-chan struct{}
	// OnClaim, if set, is called with each claim's answer before its work is done.
	OnClaim func(*Next)
	// OnError, if set, receives handler errors, lost locks and failed claims (default: the
	// client's Logger). The poller goes on after each.
	OnError func(error)
}

// RunClaims is the continuous claim poller: claim; on work run the holder loop on that lcid
// and claim again at once; on 204 sleep a random 200 ms to 1 s and claim again; until ctx is
// done (returns ctx.Err()) or opts.Stop is closed (returns nil). It never stops at the first
// 204: work becomes claimable later than the call that orphaned it.
func (c *Client) RunClaims(ctx context.Context, handler Handler, opts ClaimOptions) error {
	if c.err != nil {
		return c.err // no claim could ever succeed: do not poll
	}
	if opts.LeaseMs <= 0 {
		opts.LeaseMs = 30000
	}
	report := func(err error) {
		if opts.OnError != nil {
			opts.OnError(err)
		} else {
			c.log.Printf("baton: claim poller: %v", err)
		}
	}
	req := ClaimRequest{LeaseMs: opts.LeaseMs, LcidPrefix: opts.LcidPrefix}
	if opts.Take > 1 {
		req.Take = opts.Take
	}
	idle := func() bool { // sleeps the jitter; false when stopped meanwhile
		t := time.NewTimer(c.jitter.between(200*time.Millisecond, time.Second))
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-ctx.Done():
			return false
		case <-opts.Stop:
			return false
		}
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-opts.Stop:
			return nil
		default:
		}
		n, sentAt, err := c.claim(ctx, req)
		if err != nil {
			if ctx.Err() == nil {
				report(err)
			}
			idle()
			continue
		}
		if n == nil {
			idle()
			continue
		}
		if opts.OnClaim != nil {
			opts.OnClaim(n)
		}
		var r RunReport
		if err := c.holdLoop(ctx, n.Lcid, n, sentAt, Item{}, handler, opts.LeaseMs, opts.Take, &r); err != nil {
			if !errors.Is(err, context.Canceled) || ctx.Err() == nil {
				report(err)
			}
		}
	}
}
