package baton

// The retries: one call sent again with the same body after a transport error, 429, 500 or
// 503, with full-jitter backoff until the caller's deadline, and the warning of a call that
// keeps failing. Uses the transport (http.go) only.

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"net/http"
	"sync"
	"time"
)

// warnAfter is the failed attempt of one call after which the client says it keeps retrying.
const warnAfter = 3

// jitter is a seeded source of its own: Go 1.19's global math/rand source is not seeded, so
// every process would otherwise sleep the same "random" backoffs in step.
type jitter struct {
	mu sync.Mutex
	r  *rand.Rand
}

func newJitter() *jitter {
	var b [8]byte
	seed := time.Now().UnixNano()
	if _, err := crand.Read(b[:]); err == nil {
		seed ^= int64(binary.LittleEndian.Uint64(b[:]))
	}
	return &jitter{r: rand.New(rand.NewSource(seed))}
}

// between returns a random duration in [lo, hi].
func (j *jitter) between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return lo + time.Duration(j.r.Int63n(int64(hi-lo)+1))
}

// backoff is the full-jitter exponential backoff of retry number attempt (0 = first retry):
// a random sleep in [0, min(cap, base*2^attempt)], never shorter than retryAfter.
func (j *jitter) backoff(attempt int, base, cap, retryAfter time.Duration) time.Duration {
	ceil := cap
	if attempt < 30 {
		if d := base << uint(attempt); d > 0 && d < cap {
			ceil = d
		}
	}
	d := j.between(0, ceil)
	if d < retryAfter {
		d = retryAfter
	}
	return d
}

// retryable says whether err may be sent again with the same body: a transport failure, or a
// problem answer of 429, 500 or 503. Every Baton call is answered from what is stored, so a
// repeat is safe; anything else (other 4xx, a proxy's HTML) would only fail the same way.
func retryable(err error) bool {
	var p *ProblemError
	if errors.As(err, &p) {
		return p.Status == 429 || p.Status == 500 || p.Status == 503
	}
	var t *TransportError
	return errors.As(err, &t)
}

// uncertain says whether a failed attempt may have reached the service and changed what is
// stored: its answer was lost (transport error) or the service could not tell (500, 503).
// A 429 or a 401 stored nothing.
func uncertain(err error) bool {
	var p *ProblemError
	if errors.As(err, &p) {
		return p.Status == 500 || p.Status == 503
	}
	var t *TransportError
	return errors.As(err, &t)
}

// sleepCtx sleeps d or until ctx is done; it reports whether the full sleep happened.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// retrier sends calls with retries over a transport.
type retrier struct {
	*transport
	jitter *jitter
}

// callOpts: longPollMs > 0 gives the attempt a read timeout of longPollMs + 5 s; a non-zero
// deadline bounds the retries (the holder's lease deadline for heartbeats).
type callOpts struct {
	longPollMs int
	deadline   time.Time
	header     map[string]string // extra headers of every attempt
}

// reply is what one call got, and when. A holder's lease counts from a send time on the
// monotonic clock: a replayed answer (acquire, complete) does not renew the lease, so those
// count from firstSent; a heartbeat renews on every attempt, so it counts from sentAt.
type reply struct {
	status    int
	body      []byte
	firstSent time.Time // the send of the call's first attempt
	sentAt    time.Time // the send of the attempt that got the answer (or the last error)
	// uncertain counts the earlier attempts that may have changed what is stored (their answer
	// was lost, or a 500 or 503): a later DUPLICATE_REQUEST may be this call's own doing.
	uncertain int
}

// do sends one call with retries until the answer, an error that is not retried, or the
// deadline: co.deadline, else ctx's, else RetryTimeout from the start (for a long-poll, from
// the end of its first attempt: the retry budget starts after the held call).
func (r *retrier) do(ctx context.Context, method, path string, body any, co callOpts) (reply, error) {
	var rep reply
	if r.err != nil {
		return rep, r.err
	}
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return rep, fmt.Errorf("baton: encoding the body of %s %s: %w", method, path, err)
		}
	}
	deadline := co.deadline
	if deadline.IsZero() {
		if d, ok := ctx.Deadline(); ok {
			deadline = d
		} else if co.longPollMs == 0 {
			deadline = time.Now().Add(r.opts.RetryTimeout)
		}
	}
	attemptTimeout := r.opts.Timeout
	if co.longPollMs > 0 {
		attemptTimeout = time.Duration(co.longPollMs)*time.Millisecond + 5*time.Second
	}
	reread, warned := false, false
	for attempt := 0; ; attempt++ {
		rep.sentAt = time.Now()
		if attempt == 0 {
			rep.firstSent = rep.sentAt
		}
		timeout := attemptTimeout
		if co.longPollMs == 0 || !co.deadline.IsZero() {
			// A long-poll attempt is held on purpose: only ctx (or a holder's deadline) cuts it.
			if left := time.Until(deadline); left < timeout {
				timeout = left
			}
		}
		auth := r.auth.header(false)
		status, data, err := r.once(ctx, method, path, payload, auth, co.header, timeout)
		rep.status, rep.body = status, data
		if deadline.IsZero() {
			deadline = time.Now().Add(r.opts.RetryTimeout)
		}
		if err == nil {
			return rep, nil
		}
		// The token file may have been replaced since the last read. Once only: a 401 with the
		// new token is the token's own refusal.
		if status == http.StatusUnauthorized && !reread && ctx.Err() == nil && time.Now().Before(deadline) {
			reread = true
			if r.auth.renewed(auth) {
				continue
			}
		}
		if ctx.Err() != nil || !retryable(err) {
			return rep, err
		}
		var retryAfter time.Duration
		var p *ProblemError
		if errors.As(err, &p) && p.RetryAfter > 0 {
			retryAfter = time.Duration(p.RetryAfter) * time.Second
		}
		sleep := r.jitter.backoff(attempt, r.opts.BackoffBase, r.opts.BackoffCap, retryAfter)
		if !time.Now().Add(sleep).Before(deadline) {
			return rep, err
		}
		if uncertain(err) {
			rep.uncertain++
		}
		if attempt+1 >= warnAfter && !warned {
			// Not silent: a wrong URL or a service down shows in the log now, not at the deadline.
			warned = true
			r.log.Printf("baton: warning: %s %s to %s failed %d times, last: %v; retrying until its deadline (%s from now)",
				method, path, r.hostPort, attempt+1, err, time.Until(deadline).Round(time.Millisecond))
		}
		if !sleepCtx(ctx, sleep) {
			return rep, err
		}
	}
}
