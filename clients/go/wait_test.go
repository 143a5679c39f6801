package baton

// Unit tests of wait mode against local stubs: a turn's attempt, a turn live when returned, a
// wait that keeps its place unless the caller gives up, LockAll giving up as a whole, and the
// warning about a queue nobody holds.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestUnit_TurnAttempt(t *testing.T) {
	for extra, want := range map[string]int{`,"attempt":2`: 2, ``: 1} {
		c, _ := newRecorder(t, Options{}, func(n int, w http.ResponseWriter, r *http.Request, body string) {
			if strings.HasSuffix(r.URL.Path, "/acquire") {
				answer(w, 200, acquiredFor("w", extra))
				return
			}
			answer(w, 200, releasedBody)
		})
		turn, err := c.AwaitTurn(context.Background(), "L", "w", nil, 30000, time.Second)
		if err != nil || turn.Attempt != want {
			t.Fatalf("%q: %+v %v", extra, turn, err)
		}
		turn.Abort(context.Background(), true, "test")
	}
}

// The lease of a turn counts from the send of the first attempt of the call that picked it up,
// also when a retry got the answer: more than a third of it gone, the turn is renewed at once.
func TestUnit_TurnLeaseCountsFromFirstSend(t *testing.T) {
	for _, tc := range []struct {
		name           string
		slowFirst      bool   // the first attempt is held 500 ms, then answered 503
		heartbeat      string // how the stub answers a heartbeat
		wantHeartbeats int    // before AwaitTurn returns
	}{
		{"answered-at-once", false, "ok", 0},
		{"retry-got-the-answer", true, "ok", 1},
		{"renewal-lock-lost", true, "lost", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, rec := newRecorder(t, Options{}, func(n int, w http.ResponseWriter, r *http.Request, body string) {
				switch {
				case strings.HasSuffix(r.URL.Path, "/acquire") && n == 1 && tc.slowFirst:
					time.Sleep(500 * time.Millisecond)
					problem(w, 503, "BACKEND_UNAVAILABLE", "")
				case strings.HasSuffix(r.URL.Path, "/acquire"):
					answer(w, 200, `{"status":"ACQUIRED","lcid":"L","requestId":"w","token":"tok","fence":3,"leaseMs":900,"attempt":1}`)
				case strings.HasSuffix(r.URL.Path, "/heartbeat") && tc.heartbeat == "lost":
					problem(w, 409, "LOCK_LOST", "")
				case strings.HasSuffix(r.URL.Path, "/heartbeat"):
					answer(w, 200, `{"status":"ACQUIRED","lcid":"L","requestId":"w","token":"tok","fence":3,"leaseMs":900}`)
				default:
					answer(w, 200, releasedBody)
				}
			})
			turn, err := c.AwaitTurn(context.Background(), "L", "w", nil, 900, 10*time.Second)
			heartbeats := strings.Count(fmt.Sprint(rec.paths()), "heartbeat")
			if heartbeats != tc.wantHeartbeats {
				t.Fatalf("%d heartbeats before the turn was returned, want %d (%v)", heartbeats, tc.wantHeartbeats, rec.paths())
			}
			if tc.heartbeat == "lost" {
				var lost *LockLostError
				if !errors.As(err, &lost) || lost.ByClient || turn != nil {
					t.Fatalf("a LOCK_LOST renewal is lock lost: %v", err)
				}
				return
			}
			if err != nil || turn.Context().Err() != nil {
				t.Fatalf("the turn is not live: %v", err)
			}
			if _, err := turn.Complete(context.Background(), "done"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestUnit_AwaitTurnKeepsPlaceOnFailure(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answer  func(w http.ResponseWriter)
		is      func(error) bool
		options Options
	}{
		{"proxy-502", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			io.WriteString(w, "<html>502 Bad Gateway</html>")
		}, func(err error) bool { var u *UnexpectedResponseError; return errors.As(err, &u) }, Options{}},
		{"503-past-the-retry-deadline", func(w http.ResponseWriter) { problem(w, 503, "BACKEND_UNAVAILABLE", "") },
			func(err error) bool { return errors.Is(err, ErrBackendUnavailable) }, Options{RetryTimeout: 300 * time.Millisecond}},
		{"unexpected-outcome", func(w http.ResponseWriter) { answer(w, 200, releasedBody) },
			func(err error) bool { return err != nil && strings.Contains(err.Error(), "RELEASED") }, Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, rec := newRecorder(t, tc.options, func(n int, w http.ResponseWriter, r *http.Request, body string) {
				if strings.HasSuffix(r.URL.Path, "/acquire") {
					tc.answer(w)
					return
				}
				answer(w, 200, releasedBody) // a withdrawal, which must not come
			})
			_, err := c.AwaitTurn(context.Background(), "L", "w", nil, 30000, 0)
			if !tc.is(err) {
				t.Fatalf("%v", err)
			}
			if p := fmt.Sprint(rec.paths()); strings.Contains(p, "abort") {
				t.Fatalf("the wait was withdrawn after a failure of the call: %v", p)
			}
		})
	}
	// The caller gives up: its timeout, or its ctx.
	for _, giveUp := range []string{"timeout", "ctx"} {
		t.Run("withdrawn-on-"+giveUp, func(t *testing.T) {
			c, rec := newRecorder(t, Options{}, func(n int, w http.ResponseWriter, r *http.Request, body string) {
				switch {
				case strings.HasSuffix(r.URL.Path, "/acquire"):
					var b struct{ WaitMs int }
					json.Unmarshal([]byte(body), &b)
					select { // a long-poll held until waitMs, or until the client goes away
					case <-time.After(time.Duration(b.WaitMs) * time.Millisecond):
					case <-r.Context().Done():
						return
					}
					answer(w, 202, `{"status":"QUEUED","lcid":"L","requestId":"w","position":1,"queueLength":2}`)
				case strings.HasSuffix(r.URL.Path, "/abort"):
					answer(w, 200, releasedBody)
				default:
					answer(w, 200, `{"lcid":"L","held":true,"queueLength":2}`)
				}
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			timeout := 300 * time.Millisecond
			if giveUp == "ctx" {
				timeout = 0
				time.AfterFunc(300*time.Millisecond, cancel)
			}
			_, err := c.AwaitTurn(ctx, "L", "w", nil, 30000, timeout)
			if giveUp == "timeout" && !errors.Is(err, ErrTimeout) || giveUp == "ctx" && !errors.Is(err, context.Canceled) {
				t.Fatalf("%v", err)
			}
			calls := rec.list()
			if last := calls[len(calls)-1]; !strings.HasSuffix(last.path, "/abort") || strings.Contains(last.body, "token") ||
				!strings.Contains(last.body, `"requestId":"w"`) {
				t.Fatalf("want a withdrawal last, got %+v", calls)
			}
		})
	}
}

func TestUnit_LockAllGivesUpAsAWhole(t *testing.T) {
	c, rec := newRecorder(t, Options{}, func(n int, w http.ResponseWriter, r *http.Request, body string) {
		switch r.URL.Path {
		case "/v1/locks/A/acquire":
			answer(w, 200, `{"status":"ACQUIRED","lcid":"A","requestId":"`+requestID(body)+`","token":"tokA","fence":1,"leaseMs":30000}`)
		case "/v1/locks/B/acquire":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			io.WriteString(w, "<html>502 Bad Gateway</html>")
		default:
			answer(w, 200, `{"status":"RELEASED","lcid":"x","pending":0}`)
		}
	})
	err := c.LockAll(context.Background(), []string{"B", "A"}, func(context.Context, map[string]int64) error {
		t.Error("the handler must not run")
		return nil
	}, LockAllOptions{})
	var u *UnexpectedResponseError
	if !errors.As(err, &u) || u.Status != 502 {
		t.Fatalf("%v", err)
	}
	var withdrewB, abortedA bool
	var idB string
	for _, s := range rec.list() {
		switch {
		case s.path == "/v1/locks/B/acquire":
			idB = requestID(s.body)
		case s.path == "/v1/locks/B/abort":
			withdrewB = !strings.Contains(s.body, "token") && requestID(s.body) == idB
		case s.path == "/v1/locks/A/abort":
			abortedA = strings.Contains(s.body, `"token":"tokA"`) && !strings.Contains(s.body, "requeue")
		}
	}
	if !withdrewB || !abortedA {
		t.Fatalf("want B's wait withdrawn and A's turn aborted: %+v", rec.list())
	}
}

func TestUnit_StrandedQueueWarning(t *testing.T) {
	for _, tc := range []struct {
		name  string
		views []string // the lock view answers, in turn (the last one repeats)
		warn  bool
	}{
		{"nobody-holds", []string{`{"lcid":"L","held":false,"queueLength":2}`}, true},
		{"held-in-between", []string{`{"lcid":"L","held":false,"queueLength":2}`, `{"lcid":"L","held":true,"queueLength":2}`}, false},
		{"empty-queue", []string{`{"lcid":"L","held":false,"queueLength":0}`}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, rec := newRecorder(t, Options{}, func(n int, w http.ResponseWriter, r *http.Request, body string) {
				switch {
				case strings.HasSuffix(r.URL.Path, "/acquire"):
					time.Sleep(20 * time.Millisecond) // a long-poll that answered QUEUED
					answer(w, 202, `{"status":"QUEUED","lcid":"L","requestId":"w","position":2,"queueLength":2}`)
				case strings.HasSuffix(r.URL.Path, "/abort"):
					answer(w, 200, releasedBody)
				case len(tc.views) == 1:
					answer(w, 200, tc.views[0])
				default:
					answer(w, 200, tc.views[(n-1)%len(tc.views)])
				}
			})
			_, err := c.AwaitTurn(context.Background(), "L", "w", nil, 30000, 500*time.Millisecond)
			if !errors.Is(err, ErrTimeout) {
				t.Fatal(err)
			}
			// The wait went on after the reads (and after the warning, which is said once).
			paths := fmt.Sprint(rec.paths())
			if polls, reads := strings.Count(paths, "POST acquire"), strings.Count(paths, "GET L"); polls < 4 || reads < 2 {
				t.Fatalf("%d long-polls, %d lock view reads: the test proves nothing", polls, reads)
			}
			logged := rec.log()
			if n := strings.Count(logged, "nobody holds"); tc.warn && n != 1 || !tc.warn && n != 0 {
				t.Fatalf("%d warnings: %q", n, logged)
			}
			if tc.warn && (!strings.Contains(logged, "waiting for a turn on L") || !strings.Contains(logged, "#who-rescues-what")) {
				t.Fatalf("the warning must name the lcid and who rescues what: %q", logged)
			}
		})
	}
}
