package baton

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/rand"
	"sync"
	"time"
)

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

// NewRequestID returns a fresh random requestId (128 bits, hex): what Run, AwaitTurn and
// LockAll use when the caller names none.
func NewRequestID() string {
	var b [16]byte
	if _, err := crand.Read(b[:]); err != nil {
		binary.LittleEndian.PutUint64(b[:], uint64(time.Now().UnixNano()))
	}
	return hex.EncodeToString(b[:])
}

func marshalRaw(v any) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		return raw, nil
	}
	return json.Marshal(v)
}
