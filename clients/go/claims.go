package baton

// The claim poller: RunClaims. Uses the holder loop (holder.go) and the calls.

import (
	"context"
	"time"
)

// ClaimOptions configures RunClaims. Zero values mean the defaults.
type ClaimOptions struct {
	LcidPrefix string // only lcids that start with it (exact, case-sensitive); "" = any
	LeaseMs    int    // the lease of claimed locks, default 30000
	Take       int    // requests per NEXT, default 1
	// Stop, when closed, ends the poller gracefully: a claim in flight ends at once (its
	// retries too), the holder loop in hand runs to its end. Cancelling ctx instead cancels
	// the handler too.
	Stop <-chan struct{}
	// OnClaim, if set, is called with each claim's answer before its work is done.
	OnClaim func(*Next)
	// OnError, if set, receives every handler error, lost lock and failed claim (default: a
	// warning in the client's Logger). The poller goes on after each.
	OnError func(error)
}

// ClaimReport is what a claim poller did, returned when it stops.
type ClaimReport struct {
	Claims  int // claims answered with work
	Handled int // requests completed
	Failed  int // errors passed to OnError (or logged)
}

// RunClaims is the continuous claim poller: claim; on work run the holder loop on that lcid
// and claim again at once; on 204 sleep a random 200 ms to 1 s and claim again; until ctx is
// done (returns the report and ctx.Err()) or opts.Stop is closed (the report and nil). It never
// stops at the first 204: work becomes claimable later than the call that orphaned it. Every
// deployment that uses Run runs one for its kind of lcids: a request nobody holds (its handler
// failed, its holder died) is done only by a claim poller or the next acquire on its lcid.
func (c *calls) RunClaims(ctx context.Context, handler Handler, opts ClaimOptions) (*ClaimReport, error) {
	report := &ClaimReport{}
	if c.err != nil {
		return report, c.err // no claim could ever succeed: do not poll
	}
	if opts.LeaseMs <= 0 {
		opts.LeaseMs = 30000
	}
	fail := func(err error) {
		report.Failed++
		if opts.OnError != nil {
			opts.OnError(err)
		} else {
			c.log.Printf("baton: warning: claim poller: %v", err)
		}
	}
	req := ClaimRequest{LeaseMs: opts.LeaseMs, LcidPrefix: opts.LcidPrefix}
	if opts.Take > 1 {
		req.Take = opts.Take
	}
	// Claims (and their retries, and the sleeps between them) end when ctx ends or Stop closes;
	// the holder loop in hand only when ctx ends.
	pollCtx, stopPolling := context.WithCancel(ctx)
	defer stopPolling()
	if opts.Stop != nil {
		go func() {
			select {
			case <-opts.Stop:
				stopPolling()
			case <-pollCtx.Done():
			}
		}()
	}
	idle := func() { // sleeps the jitter, or until stopped
		sleepCtx(pollCtx, c.jitter.between(200*time.Millisecond, time.Second))
	}
	for {
		if err := ctx.Err(); err != nil {
			return report, err
		}
		if pollCtx.Err() != nil {
			return report, nil // Stop was closed
		}
		n, renewed, err := c.claim(pollCtx, req)
		if err != nil {
			if pollCtx.Err() == nil {
				fail(err)
			}
			idle()
			continue
		}
		if n == nil {
			idle()
			continue
		}
		report.Claims++
		if opts.OnClaim != nil {
			opts.OnClaim(n)
		}
		var r RunReport
		err = c.holdLoop(ctx, n.Lcid, n, renewed, Item{}, handler, opts.LeaseMs, opts.Take, &r)
		report.Handled += len(r.Handled)
		if err != nil && ctx.Err() == nil {
			fail(err) // a failure caused by the caller's cancelling is not one
		}
	}
}
