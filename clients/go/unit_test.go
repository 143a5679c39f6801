package baton

// Unit tests against local stubs of the transport and the retries: backoff, Retry-After,
// deadlines, the retry warning, non-JSON answers, typed errors, the token file, the trace
// context. The holder, wait mode and the claim poller have test files of their own.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
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
	// A wrong URL is seen in the message: the host and port it could not reach.
	host := strings.TrimPrefix(url, "http://")
	if te.Host != host || !strings.Contains(err.Error(), host) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("host %q, message %q", te.Host, err)
	}
}

func TestUnit_HostPort(t *testing.T) {
	for base, want := range map[string]string{
		"http://baton.internal":        "baton.internal:80",
		"https://baton.example.com/":   "baton.example.com:443",
		"http://127.0.0.1:8081":        "127.0.0.1:8081",
		"http://[::1]:9000/prefix":     "[::1]:9000",
		"http://user:secret@host:8080": "host:8080",
	} {
		if got := hostPort(base); got != want {
			t.Errorf("hostPort(%q) = %q, want %q", base, got, want)
		}
	}
}

// One warning per call, after its third failed attempt: method, path, host:port, the last
// error, that it goes on; never the key.
func TestUnit_RetryWarningOncePerCall(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	failures := int32(5)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if atomic.AddInt32(&failures, -1) >= 0 {
			problem(w, 503, "BACKEND_UNAVAILABLE", "")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"lcid":"L","held":false,"queueLength":0}`)
	}))
	defer srv.Close()
	c := New(srv.URL, Options{APIKey: "secret-key-42", BackoffBase: time.Millisecond, Logger: log.New(lockedWriter{&mu, &logs}, "", 0)})
	if _, err := c.Lock(context.Background(), "L"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	out := logs.String()
	mu.Unlock()
	host := strings.TrimPrefix(srv.URL, "http://")
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "warning") || !strings.Contains(out, "GET /v1/locks/L ") ||
		!strings.Contains(out, host) || !strings.Contains(out, "failed 3 times") || !strings.Contains(out, "503 BACKEND_UNAVAILABLE") ||
		!strings.Contains(out, "until its deadline") || strings.Contains(out, "secret-key-42") {
		t.Fatalf("log %q", out)
	}
	// Two failed attempts: no warning.
	atomic.StoreInt32(&failures, 2)
	if _, err := c.Lock(context.Background(), "L"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if logs.String() != out {
		t.Fatalf("a call that failed twice warned: %q", logs.String()[len(out):])
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

// ---- trace context ----------------------------------------------------------------------

const (
	tp1 = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tp2 = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
)

func TestUnit_TraceFieldsParsed(t *testing.T) {
	o, err := parseOutcome(200, []byte(`{"status":"ACQUIRED","lcid":"L","requestId":"r","token":"t","fence":1,"leaseMs":1000,`+
		`"traceparent":"`+tp1+`","tracestate":"vendor=x"}`))
	if a := o.(*Acquired); err != nil || a.TraceParent != tp1 || a.TraceState != "vendor=x" {
		t.Fatalf("%+v %v", o, err)
	}
	if o, _ := parseOutcome(200, []byte(acquired)); o.(*Acquired).TraceParent != "" || o.(*Acquired).TraceState != "" {
		t.Fatalf("absent must be empty: %+v", o)
	}
	o, err = parseOutcome(200, []byte(`{"status":"NEXT","lcid":"L","token":"t","fence":3,"leaseMs":1000,`+
		`"request":{"requestId":"a","attempt":1,"traceparent":"`+tp1+`","tracestate":"vendor=x"},`+
		`"requests":[{"requestId":"a","attempt":1,"traceparent":"`+tp1+`","tracestate":"vendor=x"},{"requestId":"b","attempt":2,"other":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	n := o.(*Next)
	if n.Request.TraceParent != tp1 || n.Request.TraceState != "vendor=x" {
		t.Fatalf("request %+v", n.Request)
	}
	if it := n.items(); len(it) != 2 || it[0].TraceParent != tp1 || it[0].TraceState != "vendor=x" || it[1].TraceParent != "" || it[1].TraceState != "" {
		t.Fatalf("requests %+v", it)
	}
	c, _ := stub(t, func(n int32, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/with") {
			io.WriteString(w, `{"lcid":"L","requestId":"with","state":"QUEUED","position":1,"attempt":1,"traceparent":"`+tp2+`","tracestate":"a=b"}`)
		} else {
			io.WriteString(w, `{"lcid":"L","requestId":"without","state":"QUEUED","position":1,"attempt":1}`)
		}
	})
	if v, err := c.Request(context.Background(), "L", "with", 0); err != nil || v.TraceParent != tp2 || v.TraceState != "a=b" {
		t.Fatalf("%+v %v", v, err)
	}
	if v, err := c.Request(context.Background(), "L", "without", 0); err != nil || v.TraceParent != "" || v.TraceState != "" {
		t.Fatalf("%+v %v", v, err)
	}
}

func TestUnit_TraceHeaders(t *testing.T) {
	type sent struct{ tp, ts, body string }
	var got []sent
	var mu sync.Mutex
	c, _ := stub(t, func(n int32, w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, hasTP := r.Header["Traceparent"]
		_, hasTS := r.Header["Tracestate"]
		mu.Lock()
		got = append(got, sent{r.Header.Get("traceparent"), r.Header.Get("tracestate"), string(b)})
		mu.Unlock()
		if !hasTP && hasTS {
			t.Errorf("a tracestate without a traceparent")
		}
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/complete") {
			io.WriteString(w, `{"status":"RELEASED","lcid":"L","pending":0}`)
			return
		}
		io.WriteString(w, acquired)
	})
	ctx := context.Background()
	last := func() sent {
		mu.Lock()
		defer mu.Unlock()
		return got[len(got)-1]
	}
	if _, err := c.Acquire(ctx, "L", AcquireRequest{RequestID: "r", TraceParent: tp1, TraceState: "vendor=x"}); err != nil {
		t.Fatal(err)
	}
	if s := last(); s.tp != tp1 || s.ts != "vendor=x" || s.body != `{"requestId":"r"}` {
		t.Fatalf("given: %+v (the trace context goes in headers, never in the body)", s)
	}
	if _, err := c.Acquire(ctx, "L", AcquireRequest{RequestID: "r", TraceState: "orphan=1"}); err != nil {
		t.Fatal(err)
	}
	if s := last(); s.tp != "" || s.ts != "" {
		t.Fatalf("none given, no hook: %+v", s)
	}
	if _, err := c.Acquire(WithTraceContext(ctx, tp2, ""), "L", AcquireRequest{RequestID: "r"}); err != nil {
		t.Fatal(err)
	}
	if s := last(); s.tp != tp2 || s.ts != "" {
		t.Fatalf("from ctx: %+v", s)
	}

	type key struct{}
	c.opts.Tracing.Inject = func(ctx context.Context) (string, string) {
		if v, _ := ctx.Value(key{}).(string); v != "" {
			return v, "from=hook"
		}
		return "", ""
	}
	hooked := context.WithValue(ctx, key{}, tp2)
	if _, err := c.Acquire(hooked, "L", AcquireRequest{RequestID: "r"}); err != nil {
		t.Fatal(err)
	}
	if s := last(); s.tp != tp2 || s.ts != "from=hook" {
		t.Fatalf("from the Inject hook: %+v", s)
	}
	if _, err := c.Acquire(hooked, "L", AcquireRequest{RequestID: "r", TraceParent: tp1}); err != nil {
		t.Fatal(err)
	}
	if s := last(); s.tp != tp1 || s.ts != "" {
		t.Fatalf("the call's own beats the hook: %+v", s)
	}
	if _, err := c.Acquire(ctx, "L", AcquireRequest{RequestID: "r"}); err != nil {
		t.Fatal(err)
	}
	if s := last(); s.tp != "" {
		t.Fatalf("the hook had no span: %+v", s)
	}
	if _, err := c.Acquire(WithTraceContext(hooked, "", ""), "L", AcquireRequest{RequestID: "r"}); err != nil {
		t.Fatal(err)
	}
	if s := last(); s.tp != "" {
		t.Fatalf("WithTraceContext(ctx, \"\", \"\") sends none: %+v", s)
	}
	// Run and AwaitTurn submit through the same path.
	mu.Lock()
	before := len(got)
	mu.Unlock()
	if _, err := c.Run(hooked, "L", func(context.Context, *Work) (any, error) { return nil, nil },
		RunOptions{RequestID: "r", TraceParent: tp1, TraceState: "run=1"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if run := got[before:]; len(run) != 2 || run[0].tp != tp1 || run[0].ts != "run=1" || run[1].tp != "" {
		t.Fatalf("run: %+v (only its acquire carries the trace context)", run)
	}
	mu.Unlock()
	turn, err := c.AwaitTurn(hooked, "L", "w", nil, 30000, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	turn.finish()
	if s := last(); s.tp != tp2 || s.ts != "from=hook" {
		t.Fatalf("await turn: %+v", s)
	}
}

// holderStub answers acquire with ACQUIRED (own request, tp1), the first complete with a NEXT
// batch of three (a valid traceparent, an invalid one, none), the next with RELEASED.
func holderStub(t *testing.T, aborts *int32) *Client {
	c, _ := stub(t, func(n int32, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/acquire"):
			io.WriteString(w, `{"status":"ACQUIRED","lcid":"L","requestId":"own","token":"t1","fence":5,"leaseMs":30000,"traceparent":"`+tp1+`","tracestate":"vendor=x"}`)
		case strings.HasSuffix(r.URL.Path, "/abort"):
			atomic.AddInt32(aborts, 1)
			io.WriteString(w, `{"status":"RELEASED","lcid":"L","pending":0}`)
		case strings.HasSuffix(r.URL.Path, "/complete"):
			b, _ := io.ReadAll(r.Body)
			if strings.Contains(string(b), `"t1"`) {
				io.WriteString(w, `{"status":"NEXT","lcid":"L","token":"t2","fence":6,"leaseMs":30000,`+
					`"request":{"requestId":"a","attempt":1,"traceparent":"`+tp2+`","tracestate":"s=1"},"requests":[`+
					`{"requestId":"a","attempt":1,"traceparent":"`+tp2+`","tracestate":"s=1"},`+
					`{"requestId":"b","attempt":1,"traceparent":"00-00000000000000000000000000000000-b7ad6b7169203331-01"},`+
					`{"requestId":"c","attempt":1}]}`)
			} else {
				io.WriteString(w, `{"status":"RELEASED","lcid":"L","pending":0}`)
			}
		default:
			t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
			w.WriteHeader(404)
		}
	})
	return c
}

type spanKey struct{}

func TestUnit_StartWorkHook(t *testing.T) {
	var aborts int32
	c := holderStub(t, &aborts)
	var started []WorkSpan
	var ended []error
	c.opts.Tracing.StartWork = func(ctx context.Context, w WorkSpan) (context.Context, func(error)) {
		started = append(started, w)
		n := len(started)
		return context.WithValue(ctx, spanKey{}, n), func(err error) { ended = append(ended, err) }
	}
	var inHandler []any
	var cancellable []bool
	rep, err := c.Run(context.Background(), "L", func(ctx context.Context, w *Work) (any, error) {
		inHandler = append(inHandler, ctx.Value(spanKey{}))
		cancellable = append(cancellable, ctx.Done() != nil)
		if len(ended) != len(started)-1 {
			t.Errorf("the span ended before the handler returned")
		}
		return map[string]any{"a": 1}, nil
	}, RunOptions{RequestID: "own", Take: 3})
	if err != nil || rep.Status != "RELEASED" || fmt.Sprint(rep.Handled) != "[own a b c]" {
		t.Fatalf("%+v %v", rep, err)
	}
	want := []WorkSpan{
		{Lcid: "L", RequestID: "own", Fence: 5, BatchSize: 1, Links: []TraceLink{{RequestID: "own", TraceParent: tp1, TraceState: "vendor=x"}}},
		{Lcid: "L", RequestID: "a", Fence: 6, BatchSize: 3, Links: []TraceLink{{RequestID: "a", TraceParent: tp2, TraceState: "s=1"}}},
	}
	if fmt.Sprintf("%+v", started) != fmt.Sprintf("%+v", want) {
		t.Fatalf("work spans\n %+v\nwant\n %+v", started, want)
	}
	if fmt.Sprint(inHandler) != "[1 2]" || fmt.Sprint(cancellable) != "[true true]" {
		t.Fatalf("the hook's ctx did not reach the handler: %v %v", inHandler, cancellable)
	}
	if fmt.Sprint(ended) != "[<nil> <nil>]" {
		t.Fatalf("ends %v", ended)
	}

	boom := errors.New("boom")
	started, ended = nil, nil
	_, err = c.Run(context.Background(), "L", func(ctx context.Context, w *Work) (any, error) {
		return nil, boom
	}, RunOptions{RequestID: "own"})
	if !errors.Is(err, boom) || len(started) != 1 || len(ended) != 1 || ended[0] != boom || aborts != 1 {
		t.Fatalf("%v: started %v ended %v aborts %d", err, started, ended, aborts)
	}
	started, ended = nil, nil
	_, err = c.Run(context.Background(), "L", func(ctx context.Context, w *Work) (any, error) {
		panic("kaput")
	}, RunOptions{RequestID: "own"})
	var he *HandlerError
	if !errors.As(err, &he) || len(ended) != 1 || ended[0] == nil || !strings.Contains(ended[0].Error(), "kaput") {
		t.Fatalf("a panic must end the span with its error: %v, ended %v", err, ended)
	}
}

func TestUnit_StartWorkHookInClaims(t *testing.T) {
	stop := make(chan struct{})
	c, _ := stub(t, func(n int32, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/claims" {
			io.WriteString(w, `{"status":"NEXT","lcid":"orphan","token":"t","fence":2,"leaseMs":30000,`+
				`"request":{"requestId":"o1","attempt":2,"traceparent":"`+tp1+`"},"requests":[{"requestId":"o1","attempt":2,"traceparent":"`+tp1+`"}]}`)
			return
		}
		io.WriteString(w, `{"status":"RELEASED","lcid":"orphan","pending":0}`)
	})
	var got []WorkSpan
	c.opts.Tracing.StartWork = func(ctx context.Context, w WorkSpan) (context.Context, func(error)) {
		got = append(got, w)
		return context.WithValue(ctx, spanKey{}, "claim"), func(error) { close(stop) }
	}
	var inHandler any
	_, err := c.RunClaims(context.Background(), func(ctx context.Context, w *Work) (any, error) {
		inHandler = ctx.Value(spanKey{})
		return nil, nil
	}, ClaimOptions{Stop: stop})
	want := fmt.Sprintf("%+v", []WorkSpan{{Lcid: "orphan", RequestID: "o1", Fence: 2, BatchSize: 1, Links: []TraceLink{{RequestID: "o1", TraceParent: tp1}}}})
	if err != nil || fmt.Sprintf("%+v", got) != want || inHandler != "claim" {
		t.Fatalf("%v %+v %v", err, got, inHandler)
	}
}

func TestUnit_NilTracingHooks(t *testing.T) {
	var aborts int32
	c := holderStub(t, &aborts)
	var ids []string
	handler := func(ctx context.Context, w *Work) (any, error) {
		for _, r := range w.Requests {
			ids = append(ids, r.RequestID+"="+r.TraceParent)
		}
		return nil, nil
	}
	rep, err := c.Run(context.Background(), "L", handler, RunOptions{RequestID: "own", Take: 3})
	if err != nil || rep.Status != "RELEASED" || len(ids) != 4 || ids[0] != "own="+tp1 || ids[1] != "a="+tp2 || ids[3] != "c=" {
		t.Fatalf("%+v %v %v", rep, err, ids)
	}
	// A hook that hands back nothing usable is as good as none.
	c.opts.Tracing.StartWork = func(context.Context, WorkSpan) (context.Context, func(error)) { return nil, nil }
	ids = nil
	if rep, err := c.Run(context.Background(), "L", handler, RunOptions{RequestID: "own", Take: 3}); err != nil || len(ids) != 4 {
		t.Fatalf("%+v %v %v", rep, err, ids)
	}
}

func TestUnit_ValidTraceParent(t *testing.T) {
	for s, want := range map[string]bool{
		tp1: true, tp2: true,
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future": true,
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x":      false,
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01":        false,
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01":        false,
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01":        false,
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01":        false,
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0":         false,
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x":       false,
		"": false, "garbage": false,
	} {
		if validTraceParent(s) != want {
			t.Errorf("validTraceParent(%q) = %v", s, !want)
		}
	}
}

// ---- token file -------------------------------------------------------------------------

// writeToken replaces the file the way the kubelet does: a new file renamed over the old.
func writeToken(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// tokenStub is stub with a token file instead of the API key.
func tokenStub(t *testing.T, opts Options, h func(n int32, w http.ResponseWriter, r *http.Request)) (*Client, *int32) {
	var hits int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h(atomic.AddInt32(&hits, 1), w, r)
	}))
	t.Cleanup(srv.Close)
	if opts.Logger == nil {
		opts.Logger = log.New(io.Discard, "", 0)
	}
	return New(srv.URL, opts), &hits
}

func TestUnit_TokenFileRefresh(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	writeToken(t, path, "  tok-1\n")
	var mu sync.Mutex
	var auths []string
	sent := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), auths...)
	}
	heartbeatWithNew := make(chan struct{}, 1)
	var logs bytes.Buffer
	var logMu sync.Mutex
	c, _ := tokenStub(t, Options{TokenFile: path, TokenRefresh: -1, Logger: log.New(lockedWriter{&logMu, &logs}, "", 0)},
		func(n int32, w http.ResponseWriter, r *http.Request) {
			a := r.Header.Get("Authorization")
			mu.Lock()
			auths = append(auths, r.URL.Path+" "+a)
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			switch {
			case strings.HasSuffix(r.URL.Path, "/acquire"):
				io.WriteString(w, `{"status":"ACQUIRED","lcid":"L","requestId":"r","token":"t","fence":1,"leaseMs":300}`)
			case strings.HasSuffix(r.URL.Path, "/heartbeat"):
				if a == "Bearer tok-3" {
					select {
					case heartbeatWithNew <- struct{}{}:
					default:
					}
				}
				io.WriteString(w, `{"status":"ACQUIRED","lcid":"L","requestId":"r","token":"t","fence":1,"leaseMs":300}`)
			case strings.HasSuffix(r.URL.Path, "/complete"):
				io.WriteString(w, `{"status":"RELEASED","lcid":"L","pending":0}`)
			default:
				io.WriteString(w, `{"lcid":"L","state":"FREE","pending":0}`)
			}
		})
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
	ctx := context.Background()
	if _, err := c.Lock(ctx, "L"); err != nil {
		t.Fatal(err)
	}
	writeToken(t, path, "tok-2\n")
	if _, err := c.Lock(ctx, "L"); err != nil {
		t.Fatal(err)
	}
	if got := sent(); fmt.Sprint(got) != "[/v1/locks/L Bearer tok-1 /v1/locks/L Bearer tok-2]" {
		t.Fatalf("sent %q", got)
	}

	// A file briefly missing: the last token goes on, reported once, never printed.
	os.Remove(path)
	for i := 0; i < 2; i++ {
		if _, err := c.Lock(ctx, "L"); err != nil {
			t.Fatal(err)
		}
	}
	logMu.Lock()
	out := logs.String()
	logMu.Unlock()
	if got := sent(); got[2] != "/v1/locks/L Bearer tok-2" || got[3] != got[2] {
		t.Fatalf("sent %q", got)
	}
	if strings.Count(out, "token file") != 1 || !strings.Contains(out, path) || strings.Contains(out, "tok-") {
		t.Fatalf("log %q", out)
	}

	// The holder's heartbeats and complete go through the same path.
	rep, err := c.Run(ctx, "L", func(ctx context.Context, w *Work) (any, error) {
		writeToken(t, path, "tok-3")
		select {
		case <-heartbeatWithNew:
			return nil, nil
		case <-time.After(5 * time.Second):
			return nil, errors.New("no heartbeat carried the new token")
		}
	}, RunOptions{RequestID: "r", LeaseMs: 300})
	if err != nil || rep.Status != "RELEASED" {
		t.Fatalf("%+v %v", rep, err)
	}
	if got := sent(); got[len(got)-1] != "/v1/locks/L/complete Bearer tok-3" {
		t.Fatalf("sent %q", got)
	}

	// Within the refresh interval the token read last is reused.
	cached, _ := tokenStub(t, Options{TokenFile: path}, func(n int32, w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, "cached "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"lcid":"L","state":"FREE","pending":0}`)
	})
	writeToken(t, path, "tok-4")
	if _, err := cached.Lock(ctx, "L"); err != nil {
		t.Fatal(err)
	}
	if got := sent(); got[len(got)-1] != "cached Bearer tok-3" {
		t.Fatalf("sent %q", got)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestUnit_TokenFile401(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	writeToken(t, path, "old")
	var auths []string
	c, hits := tokenStub(t, Options{TokenFile: path}, func(n int32, w http.ResponseWriter, r *http.Request) {
		auths = append(auths, r.Header.Get("Authorization"))
		if r.Header.Get("Authorization") != "Bearer new" {
			problem(w, 401, "UNAUTHORIZED", "")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, acquired)
	})
	// The default interval (30 s) has not passed: only the 401 makes the client read again.
	writeToken(t, path, "new")
	if _, err := c.Acquire(context.Background(), "L", AcquireRequest{RequestID: "r"}); err != nil || *hits != 2 {
		t.Fatalf("%v after %d hits", err, *hits)
	}
	if fmt.Sprint(auths) != "[Bearer old Bearer new]" {
		t.Fatalf("sent %q", auths)
	}

	writeToken(t, path, "refused")
	auths = nil
	c2, hits := tokenStub(t, Options{TokenFile: path}, func(n int32, w http.ResponseWriter, r *http.Request) {
		auths = append(auths, r.Header.Get("Authorization"))
		problem(w, 401, "UNAUTHORIZED", "")
	})
	_, err := c2.Acquire(context.Background(), "L", AcquireRequest{RequestID: "r"})
	var p *ProblemError
	if !errors.As(err, &p) || !errors.Is(err, ErrUnauthorized) || p.Status != 401 || *hits != 1 {
		t.Fatalf("%#v after %d hits", err, *hits)
	}
	if strings.Contains(err.Error(), "refused") || fmt.Sprint(auths) != "[Bearer refused]" {
		t.Fatalf("%v, sent %q", err, auths)
	}
}

func TestUnit_TokenFileAndAPIKeyExclusive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	writeToken(t, path, "secret-token")
	c, hits := tokenStub(t, Options{APIKey: "secret-key", TokenFile: path}, func(n int32, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(204)
	})
	var ce *ConfigError
	if !errors.As(c.Err(), &ce) || !strings.Contains(ce.Error(), "APIKey") || !strings.Contains(ce.Error(), "TokenFile") {
		t.Fatalf("%#v", c.Err())
	}
	if _, err := c.Lock(context.Background(), "L"); err != c.Err() {
		t.Fatalf("a call: %v", err)
	}
	if _, err := c.RunClaims(context.Background(), func(context.Context, *Work) (any, error) { return nil, nil }, ClaimOptions{}); err != c.Err() {
		t.Fatalf("the claim poller: %v", err)
	}
	if _, err := c.Run(context.Background(), "L", func(context.Context, *Work) (any, error) { return nil, nil }, RunOptions{}); err != c.Err() {
		t.Fatalf("run: %v", err)
	}
	if *hits != 0 || strings.Contains(ce.Error(), "secret") {
		t.Fatalf("%d hits, %v", *hits, ce)
	}
}

func TestUnit_TokenFileUnreadableAtNew(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing", "token")
	c, hits := tokenStub(t, Options{TokenFile: missing}, func(n int32, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(204)
	})
	var ce *ConfigError
	if !errors.As(c.Err(), &ce) || !errors.Is(c.Err(), fs.ErrNotExist) || !strings.Contains(ce.Error(), missing) {
		t.Fatalf("%#v", c.Err())
	}
	if _, err := c.Claim(context.Background(), ClaimRequest{}); err != c.Err() || *hits != 0 {
		t.Fatalf("%v after %d hits", err, *hits)
	}
	empty := filepath.Join(dir, "empty")
	writeToken(t, empty, " \n\t\n")
	if err := New("http://127.0.0.1:1", Options{TokenFile: empty}).Err(); !errors.As(err, &ce) || !strings.Contains(err.Error(), empty) {
		t.Fatalf("an empty file: %v", err)
	}
}
