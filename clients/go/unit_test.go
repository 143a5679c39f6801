package baton

// Unit tests of the transport rules against local stubs (allowed for transport behaviour
// only): retries, backoff, Retry-After, deadlines, non-JSON answers, typed errors.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func stub(t *testing.T, h func(n int32, w http.ResponseWriter, r *http.Request)) (*Client, *int32) {
	var hits int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h(atomic.AddInt32(&hits, 1), w, r)
	}))
	t.Cleanup(srv.Close)
	return New(srv.URL, Options{APIKey: "key", Logger: log.New(io.Discard, "", 0)}), &hits
}

func problem(w http.ResponseWriter, status int, code, extra string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"urn:baton:problem:x","title":"t","status":%d,"code":%q,"detail":"d","instance":"/"%s}`, status, code, extra)
}

const acquired = `{"status":"ACQUIRED","lcid":"L","requestId":"r","token":"tok","fence":9007199254740993,"leaseMs":30000,"expiresAt":"x","future":1}`

func TestUnit_BackoffBounds(t *testing.T) {
	j := newJitter()
	for a := 0; a < 12; a++ {
		ceil := 100 * time.Millisecond << uint(a)
		if ceil > 5*time.Second {
			ceil = 5 * time.Second
		}
		for i := 0; i < 200; i++ {
			if d := j.backoff(a, 100*time.Millisecond, 5*time.Second, 0); d < 0 || d > ceil {
				t.Fatalf("attempt %d: %v outside [0, %v]", a, d, ceil)
			}
			if d := j.backoff(a, 100*time.Millisecond, 5*time.Second, 1500*time.Millisecond); d < 1500*time.Millisecond {
				t.Fatalf("shorter than Retry-After: %v", d)
			}
		}
	}
}

func TestUnit_RetryAfterAndSameBody(t *testing.T) {
	var bodies []string
	c, hits := stub(t, func(n int32, w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		if r.Header.Get("Authorization") != "Bearer key" {
			t.Errorf("no bearer key")
		}
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			problem(w, 503, "BACKEND_UNAVAILABLE", "")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, acquired)
	})
	start := time.Now()
	o, err := c.Acquire(context.Background(), "L", AcquireRequest{RequestID: "r", LeaseMs: 1000})
	if err != nil || *hits != 2 {
		t.Fatalf("%v after %d hits", err, *hits)
	}
	if time.Since(start) < time.Second {
		t.Fatalf("Retry-After not honoured: %v", time.Since(start))
	}
	if bodies[0] != bodies[1] || bodies[0] != `{"requestId":"r","leaseMs":1000}` {
		t.Fatalf("bodies %q", bodies)
	}
	if a := o.(*Acquired); a.Fence != 9007199254740993 {
		t.Fatalf("fence lost precision: %d", a.Fence)
	}
}

func TestUnit_RetriesThrough429And500(t *testing.T) {
	c, hits := stub(t, func(n int32, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 1:
			problem(w, 429, "QUEUE_FULL", "")
		case 2:
			problem(w, 500, "INTERNAL_ERROR", "")
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, acquired)
		}
	})
	c.opts.BackoffBase = time.Millisecond
	if _, err := c.Acquire(context.Background(), "L", AcquireRequest{RequestID: "r"}); err != nil || *hits != 3 {
		t.Fatalf("%v after %d hits", err, *hits)
	}
}

func TestUnit_NoRetryOn4xx(t *testing.T) {
	c, hits := stub(t, func(n int32, w http.ResponseWriter, r *http.Request) {
		problem(w, 409, "LOCK_LOST", "")
	})
	_, err := c.Heartbeat(context.Background(), "L", "tok", 0)
	var p *ProblemError
	if !errors.As(err, &p) || !errors.Is(err, ErrLockLost) || errors.Is(err, ErrNotFound) || *hits != 1 {
		t.Fatalf("%#v after %d hits", err, *hits)
	}
	if p.Status != 409 || p.Code != "LOCK_LOST" || p.Type == "" || p.Title == "" || len(p.Body) == 0 {
		t.Fatalf("problem fields %+v", p)
	}
	if !errors.Is(fmt.Errorf("wrapped: %w", err), ErrLockLost) {
		t.Fatal("wrapped problem does not match its sentinel")
	}
}

func TestUnit_ProblemFields(t *testing.T) {
	c, _ := stub(t, func(n int32, w http.ResponseWriter, r *http.Request) {
		problem(w, 409, "DUPLICATE_REQUEST", `,"state":"DONE","attempt":2,"result":{"a":1}`)
	})
	_, err := c.Acquire(context.Background(), "L", AcquireRequest{RequestID: "r"})
	var p *ProblemError
	if !errors.As(err, &p) || !errors.Is(err, ErrDuplicateRequest) || p.State != "DONE" || p.Attempt != 2 || string(p.Result) != `{"a":1}` {
		t.Fatalf("%#v", err)
	}
}

func TestUnit_RetryBoundedByDeadline(t *testing.T) {
	c, hits := stub(t, func(n int32, w http.ResponseWriter, r *http.Request) {
		problem(w, 503, "BACKEND_UNAVAILABLE", "")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Lock(ctx, "L")
	if !errors.Is(err, ErrBackendUnavailable) || time.Since(start) > 900*time.Millisecond || *hits < 2 {
		t.Fatalf("%v after %v and %d hits", err, time.Since(start), *hits)
	}
}

func TestUnit_TransportErrorIsTyped(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	c := New(url, Options{RetryTimeout: 400 * time.Millisecond, Logger: log.New(io.Discard, "", 0)})
	_, err := c.Lock(context.Background(), "L")
	var te *TransportError
	if !errors.As(err, &te) {
		t.Fatalf("want a TransportError, got %#v", err)
	}
}

func TestUnit_NonJSONSuccessIsUnexpected(t *testing.T) {
	c, _ := stub(t, func(n int32, w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello")
	})
	_, err := c.Acquire(context.Background(), "L", AcquireRequest{RequestID: "r"})
	var u *UnexpectedResponseError
	if !errors.As(err, &u) || u.Status != 200 || u.Body != "hello" {
		t.Fatalf("%#v", err)
	}
}

func TestUnit_ClaimNoContentIsNil(t *testing.T) {
	c, _ := stub(t, func(n int32, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(204)
	})
	n, err := c.Claim(context.Background(), ClaimRequest{LcidPrefix: "x"})
	if n != nil || err != nil {
		t.Fatalf("%v %v", n, err)
	}
}

func TestUnit_ResultsByIDAndReason(t *testing.T) {
	m := resultsByID(map[string]string{"a": "x"})
	if m["a"] != "x" || len(resultsByID(nil)) != 0 {
		t.Fatalf("%v", m)
	}
	long := make([]rune, 2000)
	for i := range long {
		long[i] = 'é'
	}
	if n := len([]rune(cutReason(string(long)))); n != 1024 {
		t.Fatalf("reason cut to %d", n)
	}
}

func TestUnit_NextItems(t *testing.T) {
	o, err := parseOutcome(200, []byte(`{"status":"NEXT","lcid":"L","token":"t","fence":3,"leaseMs":1000,"request":{"requestId":"a","attempt":1}}`))
	if err != nil || len(o.(*Next).items()) != 1 || o.(*Next).items()[0].RequestID != "a" {
		t.Fatalf("%v %v", o, err)
	}
}
