package baton

// Unit tests of the claim poller against local stubs: OnError (and its default), OnClaim, the
// report returned when stopped, and stopping that ends a claim in flight.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func claimNext(lcid, id string) string {
	return `{"status":"NEXT","lcid":"` + lcid + `","token":"tok-` + lcid + `","fence":4,"leaseMs":30000,` +
		`"request":{"requestId":"` + id + `","attempt":2},"requests":[{"requestId":"` + id + `","attempt":2}]}`
}

func TestUnit_ClaimPollerReport(t *testing.T) {
	idle := make(chan struct{})
	var once sync.Once
	c, rec := newRecorder(t, Options{}, func(n int, w http.ResponseWriter, r *http.Request, body string) {
		switch {
		case r.URL.Path == "/v1/claims" && n == 1:
			answer(w, 200, claimNext("X", "x1"))
		case r.URL.Path == "/v1/claims" && n == 2:
			answer(w, 200, claimNext("Y", "y1"))
		case r.URL.Path == "/v1/claims" && n == 3:
			problem(w, 400, "INVALID_REQUEST", `,"field":"lcidPrefix"`) // a failed claim, never retried
		case r.URL.Path == "/v1/claims":
			once.Do(func() { close(idle) })
			w.WriteHeader(204)
		default: // the abort of X, the complete of Y
			answer(w, 200, `{"status":"RELEASED","lcid":"x","pending":0}`)
		}
	})
	boom := errors.New("boom")
	var claimed []string
	var failures []error
	stop := make(chan struct{})
	done := make(chan struct{})
	var rep *ClaimReport
	var err error
	go func() {
		defer close(done)
		rep, err = c.RunClaims(context.Background(), func(_ context.Context, w *Work) (any, error) {
			if w.Lcid == "X" {
				return nil, boom
			}
			return "ok", nil
		}, ClaimOptions{Stop: stop, OnClaim: func(n *Next) { claimed = append(claimed, n.Lcid) },
			OnError: func(err error) { failures = append(failures, err) }})
	}()
	<-idle
	close(stop)
	<-done
	if err != nil || rep.Claims != 2 || rep.Handled != 1 || rep.Failed != 2 {
		t.Fatalf("report %+v, %v", rep, err)
	}
	var p *ProblemError
	if fmt.Sprint(claimed) != "[X Y]" || len(failures) != 2 || !errors.Is(failures[0], boom) ||
		!errors.As(failures[1], &p) || p.Status != 400 {
		t.Fatalf("claimed %v, failures %v", claimed, failures)
	}
	if p := fmt.Sprint(rec.paths()); !strings.Contains(p, "POST abort") || !strings.Contains(p, "POST complete") {
		t.Fatalf("calls %v", p)
	}
	if rec.log() != "" {
		t.Fatalf("with OnError nothing is logged: %q", rec.log())
	}
}

func TestUnit_ClaimPollerDefaultOnErrorLogs(t *testing.T) {
	idle := make(chan struct{})
	var once sync.Once
	c, rec := newRecorder(t, Options{}, func(n int, w http.ResponseWriter, r *http.Request, body string) {
		if n == 1 {
			problem(w, 400, "INVALID_REQUEST", `,"field":"lcidPrefix"`)
			return
		}
		once.Do(func() { close(idle) })
		w.WriteHeader(204)
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-idle; cancel() }()
	rep, err := c.RunClaims(ctx, ok, ClaimOptions{})
	if !errors.Is(err, context.Canceled) || rep.Failed != 1 || rep.Claims != 0 {
		t.Fatalf("%+v %v", rep, err)
	}
	if l := rec.log(); !strings.Contains(l, "warning: claim poller") || !strings.Contains(l, "INVALID_REQUEST") {
		t.Fatalf("log %q", l)
	}
}

// Stopping ends a claim in flight at once, its retries included: a poller stopped during an
// outage does not wait out the retry deadline (30 s).
func TestUnit_ClaimPollerStopEndsClaimInFlight(t *testing.T) {
	for _, how := range []string{"stop", "ctx"} {
		t.Run(how, func(t *testing.T) {
			first := make(chan struct{})
			var once sync.Once
			c, _ := newRecorder(t, Options{}, func(n int, w http.ResponseWriter, r *http.Request, body string) {
				once.Do(func() { close(first) })
				w.Header().Set("Retry-After", "1")
				problem(w, 503, "BACKEND_UNAVAILABLE", "")
			})
			stop := make(chan struct{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type result struct {
				rep *ClaimReport
				err error
			}
			done := make(chan result, 1)
			go func() {
				rep, err := c.RunClaims(ctx, ok, ClaimOptions{Stop: stop})
				done <- result{rep, err}
			}()
			<-first // the claim is retrying now: its next attempt is a second away
			stoppedAt := time.Now()
			if how == "stop" {
				close(stop)
			} else {
				cancel()
			}
			var r result
			select {
			case r = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("the poller did not stop")
			}
			if d := time.Since(stoppedAt); d > 500*time.Millisecond {
				t.Fatalf("stopped after %v: the claim in flight went on", d)
			}
			if how == "stop" && r.err != nil || how == "ctx" && !errors.Is(r.err, context.Canceled) || r.rep.Failed != 0 {
				t.Fatalf("%+v %v (a claim ended by stopping is no failure)", r.rep, r.err)
			}
		})
	}
}

// Stop lets the holder loop in hand run to its end: the work is completed.
func TestUnit_ClaimPollerStopLetsWorkInHandFinish(t *testing.T) {
	c, rec := newRecorder(t, Options{}, func(n int, w http.ResponseWriter, r *http.Request, body string) {
		if r.URL.Path == "/v1/claims" {
			answer(w, 200, claimNext("X", "x1"))
			return
		}
		answer(w, 200, `{"status":"RELEASED","lcid":"X","pending":0}`)
	})
	stop := make(chan struct{})
	rep, err := c.RunClaims(context.Background(), func(ctx context.Context, w *Work) (any, error) {
		close(stop)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
			return "ok", nil
		}
	}, ClaimOptions{Stop: stop})
	if err != nil || rep.Claims != 1 || rep.Handled != 1 || rep.Failed != 0 {
		t.Fatalf("%+v %v", rep, err)
	}
	if p := fmt.Sprint(rec.paths()); p != "[POST claims POST complete]" {
		t.Fatalf("calls %v", p)
	}
}
