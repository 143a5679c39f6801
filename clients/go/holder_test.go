package baton

// Unit tests of the holder (Run) against local stubs: its report, onSubmit, the duplicate after
// its own retry, the report of a failed run, attempt, and who decided that a lock was lost.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// sent is one request a stub received.
type sent struct{ method, path, body string }

// recorder is a stub service that records every request and answers with route.
type recorder struct {
	mu    sync.Mutex
	calls []sent
	logMu sync.Mutex
	logs  bytes.Buffer
}

func (r *recorder) list() []sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sent(nil), r.calls...)
}

// paths lists "METHOD last-path-segment" of every request, e.g. "POST acquire".
func (r *recorder) paths() []string {
	var out []string
	for _, s := range r.list() {
		out = append(out, s.method+" "+s.path[strings.LastIndex(s.path, "/")+1:])
	}
	return out
}

func (r *recorder) log() string {
	r.logMu.Lock()
	defer r.logMu.Unlock()
	return r.logs.String()
}

// newRecorder starts a stub whose route answers each request (n counts the requests to the
// same last path segment, from 1); the client logs into the recorder.
func newRecorder(t *testing.T, opts Options, route func(n int, w http.ResponseWriter, r *http.Request, body string)) (*Client, *recorder) {
	rec := &recorder{}
	counts := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.calls = append(rec.calls, sent{r.Method, r.URL.Path, string(b)})
		seg := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
		counts[seg]++
		n := counts[seg]
		rec.mu.Unlock()
		route(n, w, r, string(b))
	}))
	t.Cleanup(srv.Close)
	if opts.APIKey == "" && opts.TokenFile == "" {
		opts.APIKey = "key"
	}
	opts.Logger = log.New(lockedWriter{&rec.logMu, &rec.logs}, "", 0)
	if opts.BackoffBase == 0 {
		opts.BackoffBase = time.Millisecond
	}
	return New(srv.URL, opts), rec
}

func answer(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// requestID reads the requestId of a request body.
func requestID(body string) string {
	var b struct {
		RequestID string `json:"requestId"`
	}
	json.Unmarshal([]byte(body), &b)
	return b.RequestID
}

func acquiredFor(id string, extra string) string {
	return `{"status":"ACQUIRED","lcid":"L","requestId":"` + id + `","token":"tok","fence":7,"leaseMs":30000` + extra + `}`
}

const (
	releasedBody = `{"status":"RELEASED","lcid":"L","pending":0}`
	nextA        = `{"status":"NEXT","lcid":"L","token":"tok","fence":8,"leaseMs":30000,"request":{"requestId":"a","attempt":1},"requests":[{"requestId":"a","attempt":1}]}`
)

func ok(context.Context, *Work) (any, error) { return "ok", nil }

func TestUnit_RunReportFields(t *testing.T) {
	var mode string
	c, rec := newRecorder(t, Options{}, func(n int, w http.ResponseWriter, r *http.Request, body string) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/acquire") && mode == "acquired":
			answer(w, 200, acquiredFor(requestID(body), ""))
		case strings.HasSuffix(r.URL.Path, "/acquire") && mode == "queued":
			answer(w, 202, `{"status":"QUEUED","lcid":"L","requestId":"q","position":3,"queueLength":3}`)
		case strings.HasSuffix(r.URL.Path, "/acquire"): // rescues a queue with no holder: h1 first
			answer(w, 200, `{"status":"NEXT","lcid":"L","token":"tok","fence":8,"leaseMs":30000,"request":{"requestId":"h1","attempt":1}}`)
		case strings.HasSuffix(r.URL.Path, "/complete") && mode == "rescue":
			answer(w, 200, `{"status":"RELEASED","lcid":"L","pending":2,"passedTo":"w1"}`)
		default:
			answer(w, 200, releasedBody)
		}
	})
	ctx := context.Background()

	mode = "acquired"
	rep, err := c.Run(ctx, "L", ok, RunOptions{}) // the client generates the requestId
	own := requestID(rec.list()[0].body)
	if err != nil || own == "" || rep.RequestID != own || rep.Lcid != "L" || rep.Status != "RELEASED" ||
		fmt.Sprint(rep.Handled) != "["+own+"]" || !rep.HandledOwn || rep.Released == nil || rep.Released.Pending != 0 || rep.Position != 0 {
		t.Fatalf("acquired: %+v %v (sent %s)", rep, err, own)
	}

	mode = "queued"
	rep, err = c.Run(ctx, "L", ok, RunOptions{RequestID: "q"})
	if err != nil || rep.Status != "QUEUED" || rep.Position != 3 || rep.RequestID != "q" || rep.Lcid != "L" ||
		rep.HandledOwn || rep.Released != nil || len(rep.Handled) != 0 {
		t.Fatalf("queued: %+v %v", rep, err)
	}

	// RELEASED without the caller's own request: the lock passed to a wait request ahead of it.
	mode = "rescue"
	rep, err = c.Run(ctx, "L", ok, RunOptions{RequestID: "r2"})
	if err != nil || rep.Status != "RELEASED" || fmt.Sprint(rep.Handled) != "[h1]" || rep.HandledOwn ||
		rep.RequestID != "r2" || rep.Released == nil || rep.Released.PassedTo != "w1" || rep.Released.Pending != 2 {
		t.Fatalf("released before its own request: %+v %v", rep, err)
	}
}

func TestUnit_OnSubmitOnceBeforeHandler(t *testing.T) {
	queued := false
	c, rec := newRecorder(t, Options{}, func(n int, w http.ResponseWriter, r *http.Request, body string) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/acquire") && queued:
			answer(w, 202, `{"status":"QUEUED","lcid":"L","requestId":"x","position":1,"queueLength":1}`)
		case strings.HasSuffix(r.URL.Path, "/acquire"):
			answer(w, 200, acquiredFor(requestID(body), ""))
		case strings.HasSuffix(r.URL.Path, "/complete") && strings.Contains(body, `"requestId":"a"`):
			answer(w, 200, releasedBody)
		default:
			answer(w, 200, nextA)
		}
	})
	var events []string
	var got []Submitted
	opts := RunOptions{OnSubmit: func(s Submitted) {
		got = append(got, s)
		events = append(events, "submit")
	}}
	_, err := c.Run(context.Background(), "L", func(_ context.Context, w *Work) (any, error) {
		events = append(events, "handler "+w.Request().RequestID)
		return nil, nil
	}, opts)
	own := requestID(rec.list()[0].body)
	if err != nil || fmt.Sprint(events) != "[submit handler "+own+" handler a]" {
		t.Fatalf("%v: events %v", err, events)
	}
	if a, isAcquired := got[0].Outcome.(*Acquired); len(got) != 1 || got[0].Lcid != "L" || got[0].RequestID != own || !isAcquired || a.Token != "tok" {
		t.Fatalf("submitted %+v", got)
	}

	queued, events, got = true, nil, nil
	rep, err := c.Run(context.Background(), "L", ok, RunOptions{RequestID: "x", OnSubmit: opts.OnSubmit})
	if q, isQueued := got[0].Outcome.(*Queued); err != nil || rep.Status != "QUEUED" || len(got) != 1 || !isQueued || q.Position != 1 || got[0].RequestID != "x" {
		t.Fatalf("queued: %+v %v %+v", rep, err, got)
	}
}

// dropConnection closes the connection without an answer: the answer to a request that the
// service may have processed is lost.
func dropConnection(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

func TestUnit_DuplicateAfterOwnRetryIsQueued(t *testing.T) {
	for _, tc := range []struct{ lost, state string }{
		{"503", "ACTIVE"}, {"503", "DONE"}, {"dropped", "ACTIVE"}, {"dropped", "DONE"},
	} {
		t.Run(tc.lost+"-"+tc.state, func(t *testing.T) {
			c, _ := newRecorder(t, Options{}, func(n int, w http.ResponseWriter, r *http.Request, body string) {
				switch {
				case n == 1 && tc.lost == "503":
					problem(w, 503, "BACKEND_UNAVAILABLE", "")
				case n == 1:
					dropConnection(w)
				default:
					problem(w, 409, "DUPLICATE_REQUEST", `,"state":"`+tc.state+`","attempt":1`)
				}
			})
			var got []Submitted
			rep, err := c.Run(context.Background(), "L", func(context.Context, *Work) (any, error) {
				t.Error("no handler runs for a request another holder took")
				return nil, nil
			}, RunOptions{RequestID: "r", OnSubmit: func(s Submitted) { got = append(got, s) }})
			if err != nil || rep.Status != "QUEUED" || rep.Position != 0 || rep.HandledOwn || rep.RequestID != "r" {
				t.Fatalf("%+v %v", rep, err)
			}
			if len(got) != 1 || got[0].Outcome != nil || got[0].Lcid != "L" || got[0].RequestID != "r" {
				t.Fatalf("onSubmit %+v", got)
			}
		})
	}
}

func TestUnit_DuplicateOnFirstSendIsRaised(t *testing.T) {
	for _, tc := range []struct{ name, first, state string }{
		{"first-send", "", "DONE"},
		{"after-429", "429", "ACTIVE"},          // a 429 stored nothing: the requestId was used before
		{"aborted-after-503", "503", "ABORTED"}, // only ACTIVE and DONE are the first attempt's doing
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newRecorder(t, Options{}, func(n int, w http.ResponseWriter, r *http.Request, body string) {
				switch {
				case n == 1 && tc.first == "429":
					problem(w, 429, "QUEUE_FULL", "")
				case n == 1 && tc.first == "503":
					problem(w, 503, "BACKEND_UNAVAILABLE", "")
				default:
					problem(w, 409, "DUPLICATE_REQUEST", `,"state":"`+tc.state+`","attempt":1`)
				}
			})
			submitted := 0
			rep, err := c.Run(context.Background(), "L", ok, RunOptions{RequestID: "r", OnSubmit: func(Submitted) { submitted++ }})
			var p *ProblemError
			if !errors.Is(err, ErrDuplicateRequest) || !errors.As(err, &p) || p.State != tc.state || submitted != 0 {
				t.Fatalf("%v, %d submits", err, submitted)
			}
			if rep == nil || rep.Status != "" || rep.RequestID != "r" || rep.Lcid != "L" {
				t.Fatalf("report %+v", rep)
			}
		})
	}
}

func TestUnit_FailedRunKeepsReport(t *testing.T) {
	var completeOfA string // how the stub answers the complete of a
	c, rec := newRecorder(t, Options{}, func(n int, w http.ResponseWriter, r *http.Request, body string) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/acquire"):
			answer(w, 200, acquiredFor("own", ""))
		case strings.HasSuffix(r.URL.Path, "/abort"):
			answer(w, 200, releasedBody)
		case strings.Contains(body, `"requestId":"own"`):
			answer(w, 200, nextA)
		case completeOfA == "lost":
			problem(w, 409, "LOCK_LOST", "")
		default:
			problem(w, 400, "INVALID_REQUEST", `,"field":"result"`)
		}
	})
	boom := errors.New("boom")
	rep, err := c.Run(context.Background(), "L", func(_ context.Context, w *Work) (any, error) {
		if w.Request().RequestID == "a" {
			return nil, boom
		}
		return nil, nil
	}, RunOptions{RequestID: "own"})
	var he *HandlerError
	if !errors.As(err, &he) || !errors.Is(err, boom) || fmt.Sprint(he.RequestIDs) != "[a]" {
		t.Fatalf("handler error: %v", err)
	}
	if rep.Status != "" || fmt.Sprint(rep.Handled) != "[own]" || !rep.HandledOwn || rep.RequestID != "own" || rep.Lcid != "L" {
		t.Fatalf("handler error: report %+v", rep)
	}
	if p := rec.paths(); p[len(p)-1] != "POST abort" || !strings.Contains(rec.list()[len(p)-1].body, `"requeue":true`) {
		t.Fatalf("the failed work must be aborted with requeue: %v", p)
	}

	for _, tc := range []struct {
		mode string
		is   error
	}{{"lost", ErrLockLost}, {"refused", ErrInvalidRequest}} {
		completeOfA = tc.mode
		rep, err = c.Run(context.Background(), "L", ok, RunOptions{RequestID: "own"})
		if !errors.Is(err, tc.is) || fmt.Sprint(rep.Handled) != "[own]" || !rep.HandledOwn || rep.Status != "" {
			t.Fatalf("%s: %+v %v", tc.mode, rep, err)
		}
	}
}

func TestUnit_AttemptOnAcquired(t *testing.T) {
	for body, want := range map[string]int{
		acquiredFor("r", `,"attempt":3`): 3,
		acquiredFor("r", ""):             1, // an older service, or a heartbeat's answer
	} {
		o, err := parseOutcome(200, []byte(body))
		if err != nil || o.(*Acquired).Attempt != want {
			t.Fatalf("%s: %+v %v", body, o, err)
		}
	}
	c, _ := newRecorder(t, Options{}, func(n int, w http.ResponseWriter, r *http.Request, body string) {
		if strings.HasSuffix(r.URL.Path, "/acquire") {
			answer(w, 200, acquiredFor("r", `,"attempt":2`))
			return
		}
		answer(w, 200, releasedBody)
	})
	var attempt int
	_, err := c.Run(context.Background(), "L", func(_ context.Context, w *Work) (any, error) {
		attempt = w.Request().Attempt
		return nil, nil
	}, RunOptions{RequestID: "r"})
	if err != nil || attempt != 2 {
		t.Fatalf("the handler saw attempt %d (%v), want the ACQUIRED's 2", attempt, err)
	}
}

func TestUnit_LockLostToldApart(t *testing.T) {
	for _, by := range []string{"service", "client"} {
		t.Run(by, func(t *testing.T) {
			c, rec := newRecorder(t, Options{}, func(n int, w http.ResponseWriter, r *http.Request, body string) {
				switch {
				case strings.HasSuffix(r.URL.Path, "/acquire"):
					answer(w, 200, `{"status":"ACQUIRED","lcid":"L","requestId":"r","token":"tok","fence":1,"leaseMs":600}`)
				case strings.HasSuffix(r.URL.Path, "/heartbeat") && by == "service":
					problem(w, 409, "LOCK_LOST", "")
				case strings.HasSuffix(r.URL.Path, "/heartbeat"):
					problem(w, 503, "BACKEND_UNAVAILABLE", "") // Redis stalled: nothing renews
				default:
					t.Errorf("unexpected %s %s: a holder that lost its lock completes nothing", r.Method, r.URL.Path)
					answer(w, 200, releasedBody)
				}
			})
			cancelled := false
			_, err := c.Run(context.Background(), "L", func(ctx context.Context, w *Work) (any, error) {
				select {
				case <-ctx.Done():
					cancelled = true
					return nil, ctx.Err()
				case <-time.After(5 * time.Second):
					return "too late", nil
				}
			}, RunOptions{RequestID: "r", LeaseMs: 600})
			var lost *LockLostError
			var p *ProblemError
			if !cancelled || !errors.As(err, &lost) || !errors.Is(err, ErrLockLost) {
				t.Fatalf("cancelled %v, %v", cancelled, err)
			}
			logged := rec.log()
			if by == "service" {
				if lost.ByClient || !errors.As(err, &p) || p.Status != 409 || p.Code != "LOCK_LOST" ||
					!strings.Contains(err.Error(), "the service answered") {
					t.Fatalf("service: %#v: %v", lost, err)
				}
				if !strings.Contains(logged, "lock lost on L: the service answered LOCK_LOST") {
					t.Fatalf("log %q", logged)
				}
			} else {
				if !lost.ByClient || errors.As(err, &p) || !strings.Contains(err.Error(), "detected by the client") {
					t.Fatalf("client: %#v: %v", lost, err)
				}
				if !strings.Contains(logged, "lock lost on L, detected by the client") {
					t.Fatalf("log %q", logged)
				}
			}
		})
	}
}
