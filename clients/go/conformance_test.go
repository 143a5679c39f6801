package baton_test

// The conformance scenarios of clients/conformance/scenarios.md, one test per id, against the
// real service and redis-server started by clients/conformance/harness (no mocks), plus the
// 502 scenario against a tiny local stub. clients/conformance/run go sets BATON_URL & co.

import (
	"bufio"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	baton "github.com/baton-dev/baton/clients/go"
)

var runPrefix = func() string {
	var b [4]byte
	crand.Read(b[:])
	return "go-" + hex.EncodeToString(b[:])
}()

func service(t *testing.T) (url, key string) {
	t.Helper()
	url = os.Getenv("BATON_URL")
	if url == "" {
		t.Skip("BATON_URL is not set: run the conformance suite with clients/conformance/run go")
	}
	return url, os.Getenv("BATON_API_KEY")
}

func newClient(t *testing.T) *baton.Client {
	return newClientWith(t, baton.Options{})
}

func newClientWith(t *testing.T, o baton.Options) *baton.Client {
	url, key := service(t)
	o.APIKey = key
	o.Logger = log.New(os.Stderr, "client: ", log.Lmicroseconds)
	return baton.New(url, o)
}

// lcid gives each test lcids of its own under the run's random prefix.
func lcid(t *testing.T, name string) string {
	// The lcid alphabet has no '_' nor '/': the scenario id with dots.
	id := strings.TrimPrefix(t.Name(), "TestConformance_")
	id = strings.NewReplacer("_", ".", "/", ".").Replace(id)
	return runPrefix + "-" + id + "-" + name
}

func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// harness runs a disruption of clients/conformance/harness (it blocks until done).
func harness(args ...string) error {
	h, dir := os.Getenv("BATON_HARNESS"), os.Getenv("BATON_HARNESS_DIR")
	if h == "" {
		return errors.New("BATON_HARNESS is not set")
	}
	full := append([]string{args[0], dir}, args[1:]...)
	out, err := exec.Command(h, full...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("harness %v: %v: %s", args, err, out)
	}
	return nil
}

func view(t *testing.T, c *baton.Client, l, id string) *baton.RequestView {
	t.Helper()
	v, err := c.Request(context.Background(), l, id, 0)
	if err != nil {
		t.Fatalf("request view %s/%s: %v", l, id, err)
	}
	return v
}

func awaitDone(t *testing.T, c *baton.Client, l string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		v, err := c.AwaitResult(context.Background(), l, id, 15*time.Second)
		if err != nil {
			t.Fatalf("%s/%s did not end: %v (%+v)", l, id, err, v)
		}
		if v.State != "DONE" {
			t.Fatalf("%s/%s ended %s, want DONE (%+v)", l, id, v.State, v)
		}
	}
}

func never(t *testing.T) baton.Handler {
	return func(ctx context.Context, w *baton.Work) (any, error) {
		t.Errorf("this holder's handler must never run (got %v)", w.Requests)
		return nil, nil
	}
}

type seen struct {
	mu    sync.Mutex
	ids   []string
	att   []int
	fence []int64
	sizes []int
}

func (s *seen) add(w *baton.Work) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sizes = append(s.sizes, len(w.Requests))
	for _, r := range w.Requests {
		s.ids = append(s.ids, r.RequestID)
		s.att = append(s.att, r.Attempt)
		s.fence = append(s.fence, w.Fence)
	}
}

func TestConformance_fifo_handoff(t *testing.T) {
	h1, h2, h3 := newClient(t), newClient(t), newClient(t)
	ctx := testCtx(t, 60*time.Second)
	L := lcid(t, "L")
	var s seen
	started, release := make(chan struct{}), make(chan struct{})
	type res struct {
		rep *baton.RunReport
		err error
	}
	done := make(chan res, 1)
	go func() {
		first := true
		rep, err := h1.Run(ctx, L, func(ctx context.Context, w *baton.Work) (any, error) {
			s.add(w)
			if first {
				first = false
				close(started)
				<-release
			}
			return map[string]any{"by": "h1", "id": w.Request().RequestID}, nil
		}, baton.RunOptions{RequestID: "r1", Payload: map[string]int{"n": 1}})
		done <- res{rep, err}
	}()
	select { // a run that ends before its handler started is a failure, not a hang
	case <-started:
	case r := <-done:
		t.Fatalf("h1's run ended before its handler ran: %+v, %v", r.rep, r.err)
	}
	for _, sub := range []struct {
		c   *baton.Client
		ids []string
	}{{h2, []string{"r2", "r3"}}, {h3, []string{"r4", "r5"}}} {
		for _, id := range sub.ids {
			rep, err := sub.c.Run(ctx, L, never(t), baton.RunOptions{RequestID: id, Payload: map[string]string{"id": id}})
			if err != nil || rep.Status != "QUEUED" {
				t.Fatalf("%s: want QUEUED at once, got %+v, %v", id, rep, err)
			}
		}
	}
	close(release)
	r := <-done
	if r.err != nil || r.rep.Status != "RELEASED" {
		t.Fatalf("h1's run: %+v, %v", r.rep, r.err)
	}
	want := []string{"r1", "r2", "r3", "r4", "r5"}
	if fmt.Sprint(s.ids) != fmt.Sprint(want) || fmt.Sprint(r.rep.Handled) != fmt.Sprint(want) {
		t.Fatalf("handler saw %v, run handled %v, want %v", s.ids, r.rep.Handled, want)
	}
	for i := 1; i < len(s.fence); i++ {
		if s.fence[i] <= s.fence[i-1] {
			t.Fatalf("fences did not strictly increase: %v", s.fence)
		}
	}
	awaitDone(t, h1, L, want...)
}

func TestConformance_long_handler_keeps_lock(t *testing.T) {
	c := newClient(t)
	ctx := testCtx(t, 30*time.Second)
	L := lcid(t, "L")
	var problems []string
	rep, err := c.Run(ctx, L, func(hctx context.Context, w *baton.Work) (any, error) {
		end := time.Now().Add(3 * time.Second)
		for time.Now().Before(end) {
			v, err := c.Lock(ctx, L)
			if err != nil {
				problems = append(problems, err.Error())
			} else if !v.Held || v.Fence == nil || *v.Fence != w.Fence {
				problems = append(problems, fmt.Sprintf("lock view %+v, fence %d", v, w.Fence))
			}
			if hctx.Err() != nil {
				return nil, hctx.Err()
			}
			time.Sleep(200 * time.Millisecond)
		}
		return "ok", nil
	}, baton.RunOptions{RequestID: "long", LeaseMs: 1000})
	if err != nil || rep.Status != "RELEASED" {
		t.Fatalf("run: %+v, %v", rep, err)
	}
	if len(problems) > 0 {
		t.Fatalf("the lock was not kept: %v", problems)
	}
	v := view(t, c, L, "long")
	if v.State != "DONE" || v.Attempt != 1 {
		t.Fatalf("request view %+v, want DONE attempt 1", v)
	}
}

func TestConformance_throwing_handler_requeues(t *testing.T) {
	h1, other, h2 := newClient(t), newClient(t), newClient(t)
	ctx := testCtx(t, 60*time.Second)
	L := lcid(t, "L")
	var fence1 int64
	boom := errors.New("boom: the handler failed on purpose")
	_, err := h1.Run(ctx, L, func(_ context.Context, w *baton.Work) (any, error) {
		fence1 = w.Fence
		o, err := other.Acquire(ctx, L, baton.AcquireRequest{RequestID: "r2"})
		if _, ok := o.(*baton.Queued); !ok || err != nil {
			t.Errorf("r2: want QUEUED, got %#v, %v", o, err)
		}
		return nil, boom
	}, baton.RunOptions{RequestID: "r1"})
	var he *baton.HandlerError
	if !errors.As(err, &he) || !errors.Is(err, boom) {
		t.Fatalf("run must report the handler's error, got %v", err)
	}
	v := view(t, h1, L, "r1")
	if v.State != "QUEUED" || v.Position != 1 || v.Attempt != 2 || v.Reason != boom.Error() {
		t.Fatalf("r1 view %+v, want QUEUED position 1 attempt 2 reason %q", v, boom.Error())
	}
	var s seen
	rep, err := h2.Run(ctx, L, func(_ context.Context, w *baton.Work) (any, error) {
		s.add(w)
		return nil, nil
	}, baton.RunOptions{RequestID: "r3"})
	if err != nil || rep.Status != "RELEASED" {
		t.Fatalf("h2's run: %+v, %v", rep, err)
	}
	if fmt.Sprint(s.ids) != "[r1 r2 r3]" || s.att[0] != 2 || s.fence[0] <= fence1 {
		t.Fatalf("h2 saw %v attempts %v fences %v (h1's fence %d); want r1 (attempt 2, higher fence), r2, r3",
			s.ids, s.att, s.fence, fence1)
	}
	awaitDone(t, h2, L, "r1", "r2", "r3")
}

// TestHelperSigkillWorker is the worker process of sigkill_mid_handler (the test binary run
// again); it does nothing in a normal run.
func TestHelperSigkillWorker(t *testing.T) {
	if os.Getenv("BATON_GO_SIGKILL_WORKER") != "1" {
		t.Skip("helper process of TestConformance_sigkill_mid_handler")
	}
	c := newClient(t)
	c.Run(context.Background(), os.Getenv("BATON_GO_LCID"), func(ctx context.Context, w *baton.Work) (any, error) {
		fmt.Printf("IN_HANDLER %d\n", w.Fence)
		os.Stdout.Sync()
		time.Sleep(60 * time.Second)
		return nil, nil
	}, baton.RunOptions{RequestID: "killed", LeaseMs: 1500})
}

func TestConformance_sigkill_mid_handler(t *testing.T) {
	c := newClient(t)
	ctx := testCtx(t, 60*time.Second)
	L := lcid(t, "L")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperSigkillWorker$", "-test.count=1")
	cmd.Env = append(os.Environ(), "BATON_GO_SIGKILL_WORKER=1", "BATON_GO_LCID="+L)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "IN_HANDLER ") {
				line <- sc.Text()
				break
			}
		}
		io.Copy(io.Discard, out)
	}()
	var killedFence int64
	select {
	case l := <-line:
		fmt.Sscanf(l, "IN_HANDLER %d", &killedFence)
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the worker process never reached its handler")
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	cmd.Wait()
	time.Sleep(1700 * time.Millisecond) // the killed worker's lease (1500 ms) runs out
	var s seen
	var rep *baton.RunReport
	for i := 0; i < 20; i++ { // QUEUED while the lease still runs: the same call again rescues
		rep, err = c.Run(ctx, L, func(_ context.Context, w *baton.Work) (any, error) {
			s.add(w)
			return nil, nil
		}, baton.RunOptions{RequestID: "mine", LeaseMs: 5000})
		if err != nil || rep.Status != "QUEUED" {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err != nil || rep.Status != "RELEASED" {
		t.Fatalf("run: %+v, %v", rep, err)
	}
	if fmt.Sprint(s.ids) != "[killed mine]" || s.att[0] != 2 || s.fence[0] <= killedFence {
		t.Fatalf("saw %v attempts %v fences %v (killed worker's fence %d)", s.ids, s.att, s.fence, killedFence)
	}
	awaitDone(t, c, L, "killed", "mine")
}

// chaos: three holders on three lcids, 10 requests each, 10 s lease, 50 ms handlers, while
// the harness disrupts the system.
func chaos(t *testing.T, disruption ...string) {
	ctx := testCtx(t, 120*time.Second)
	var counts sync.Map
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	lcids := []string{lcid(t, "a"), lcid(t, "b"), lcid(t, "c")}
	acked := make([][]string, 3)
	for h := range lcids {
		wg.Add(1)
		go func(h int) {
			defer wg.Done()
			// A 2-core machine that also runs other suites may take a while to restart the
			// service: a retry budget of a minute instead of the default 30 s.
			c := newClientWith(t, baton.Options{RetryTimeout: 60 * time.Second})
			for i := 0; i < 10; i++ {
				id := fmt.Sprintf("h%d-%d", h, i)
				rep, err := c.Run(ctx, lcids[h], func(_ context.Context, w *baton.Work) (any, error) {
					for _, r := range w.Requests {
						n, _ := counts.LoadOrStore(r.RequestID, new(int32))
						atomic.AddInt32(n.(*int32), 1)
					}
					time.Sleep(50 * time.Millisecond)
					return nil, nil
				}, baton.RunOptions{RequestID: id, LeaseMs: 10000, OnSubmit: func(baton.Submitted) {
					acked[h] = append(acked[h], id)
				}})
				if err != nil {
					errs <- fmt.Errorf("%s: %v (%+v)", id, err, rep)
				}
			}
		}(h)
	}
	time.Sleep(250 * time.Millisecond)
	if err := harness(disruption...); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("an error reached the caller: %v", err)
	}
	c := newClient(t)
	for h, ids := range acked {
		for _, id := range ids {
			n, ok := counts.Load(id)
			if !ok || atomic.LoadInt32(n.(*int32)) != 1 {
				cnt := int32(0)
				if ok {
					cnt = atomic.LoadInt32(n.(*int32))
				}
				t.Errorf("%s: handler ran %d times, want 1", id, cnt)
			}
			awaitDone(t, c, lcids[h], id)
		}
	}
	if len(acked[0])+len(acked[1])+len(acked[2]) != 30 {
		t.Errorf("acknowledged submissions: %v", acked)
	}
}

func TestConformance_redis_stop_mid_run(t *testing.T) {
	service(t)
	chaos(t, "redis-stop", "3")
}

func TestConformance_service_restart_mid_run(t *testing.T) {
	service(t)
	chaos(t, "service-restart")
}

func TestConformance_lock_lost_cancels_handler(t *testing.T) {
	c := newClient(t)
	ctx := testCtx(t, 60*time.Second)
	L := lcid(t, "L")
	started := make(chan struct{})
	var cancelledAt time.Time
	pauseDone := make(chan error, 1)
	var pausedAt time.Time
	go func() {
		<-started
		pausedAt = time.Now()
		pauseDone <- harness("redis-pause", "3")
	}()
	completedFor := false
	rep, err := c.Run(ctx, L, func(hctx context.Context, w *baton.Work) (any, error) {
		close(started)
		select {
		case <-hctx.Done():
			cancelledAt = time.Now()
			return nil, hctx.Err()
		case <-time.After(10 * time.Second):
			completedFor = true
			return "too late", nil
		}
	}, baton.RunOptions{RequestID: "lost", LeaseMs: 1000})
	if perr := <-pauseDone; perr != nil {
		t.Fatal(perr)
	}
	if !errors.Is(err, baton.ErrLockLost) {
		t.Fatalf("run must report lock lost, got %+v, %v", rep, err)
	}
	if completedFor || cancelledAt.IsZero() {
		t.Fatal("the handler was not cancelled")
	}
	if d := cancelledAt.Sub(pausedAt); d > 2500*time.Millisecond {
		t.Fatalf("cancelled %v after the pause began, want about a lease (1 s)", d)
	}
	var s seen
	for i := 0; i < 20; i++ {
		rep, err = c.Run(ctx, L, func(_ context.Context, w *baton.Work) (any, error) {
			s.add(w)
			return nil, nil
		}, baton.RunOptions{RequestID: "after"})
		if err != nil || rep.Status != "QUEUED" {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err != nil || fmt.Sprint(s.ids) != "[lost after]" || s.att[0] != 2 {
		t.Fatalf("the next holder saw %v attempts %v (%+v, %v): want lost with attempt 2, then after", s.ids, s.att, rep, err)
	}
	awaitDone(t, c, L, "lost", "after")
}

func TestConformance_batch_take_8(t *testing.T) {
	c, other := newClient(t), newClient(t)
	ctx := testCtx(t, 60*time.Second)
	L := lcid(t, "L")
	var s seen
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		first := true
		rep, err := c.Run(ctx, L, func(_ context.Context, w *baton.Work) (any, error) {
			s.add(w)
			if first {
				first = false
				close(started)
				<-release
			}
			res := map[string]string{}
			for _, r := range w.Requests {
				res[r.RequestID] = "done " + r.RequestID
			}
			return res, nil
		}, baton.RunOptions{RequestID: "r00", Take: 8})
		if err == nil && rep.Status != "RELEASED" {
			err = fmt.Errorf("report %+v", rep)
		}
		done <- err
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("the run ended before its handler ran: %v", err)
	}
	var want []string
	want = append(want, "r00")
	for i := 1; i <= 20; i++ {
		id := fmt.Sprintf("r%02d", i)
		want = append(want, id)
		o, err := other.Acquire(ctx, L, baton.AcquireRequest{RequestID: id, Payload: i})
		if _, ok := o.(*baton.Queued); !ok || err != nil {
			t.Fatalf("%s: want QUEUED, got %#v, %v", id, o, err)
		}
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(s.sizes) != "[1 8 8 4]" || fmt.Sprint(s.ids) != fmt.Sprint(want) {
		t.Fatalf("batches %v of %v, want [1 8 8 4] of %v", s.sizes, s.ids, want)
	}
	i := 0
	var last int64
	for _, n := range s.sizes {
		for j := 0; j < n; j++ {
			if s.fence[i+j] != s.fence[i] {
				t.Fatalf("one fence per batch: %v", s.fence)
			}
		}
		if s.fence[i] <= last {
			t.Fatalf("fences must rise from batch to batch: %v", s.fence)
		}
		last = s.fence[i]
		i += n
	}
	awaitDone(t, c, L, want...)
	if v := view(t, c, L, "r13"); string(v.Result) != `"done r13"` {
		t.Fatalf("r13's result %s", v.Result)
	}
}

func TestConformance_wait_turn_and_result(t *testing.T) {
	w1c, w2c, third := newClient(t), newClient(t), newClient(t)
	ctx := testCtx(t, 60*time.Second)
	L := lcid(t, "L")
	t1, err := w1c.AwaitTurn(ctx, L, "w1", nil, 10000, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	type turnRes struct {
		at    time.Time
		fence int64
		err   error
	}
	w2 := make(chan turnRes, 1)
	go func() {
		t2, err := w2c.AwaitTurn(ctx, L, "w2", map[string]string{"kind": "payment"}, 10000, 20*time.Second)
		if err != nil {
			w2 <- turnRes{err: err}
			return
		}
		at := time.Now()
		_, err = t2.Complete(ctx, map[string]any{"by": "w2", "fence": t2.Fence})
		w2 <- turnRes{at, t2.Fence, err}
	}()
	for i := 0; ; i++ { // W2's request is stored (queued behind W1)
		v, err := third.Request(ctx, L, "w2", 0)
		if err == nil && v.State == "QUEUED" {
			break
		}
		if i > 100 {
			t.Fatalf("w2 never queued: %+v %v", v, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	result := make(chan *baton.RequestView, 1)
	go func() {
		v, err := third.AwaitResult(ctx, L, "w2", 20*time.Second)
		if err != nil {
			t.Errorf("await result: %v", err)
		}
		result <- v
	}()
	time.Sleep(500 * time.Millisecond)
	completedAt := time.Now()
	if _, err := t1.Complete(ctx, "w1 done"); err != nil {
		t.Fatal(err)
	}
	r := <-w2
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.at.Before(completedAt) || r.fence <= t1.Fence {
		t.Fatalf("w2's turn at %v (w1 completed at %v), fence %d (w1's %d)", r.at, completedAt, r.fence, t1.Fence)
	}
	v := <-result
	var got map[string]any
	if v == nil || v.State != "DONE" || json.Unmarshal(v.Result, &got) != nil || got["by"] != "w2" {
		t.Fatalf("the third party's result %+v", v)
	}
}

func TestConformance_claim_poller_rescues_orphan(t *testing.T) {
	raw, poller := newClient(t), newClient(t)
	ctx := testCtx(t, 60*time.Second)
	prefix := lcid(t, "")
	L, L2 := prefix+"x", prefix+"y"
	var s seen
	pctx, stop := context.WithCancel(ctx)
	pdone := make(chan pollerResult, 1)
	go func() {
		rep, err := poller.RunClaims(pctx, func(_ context.Context, w *baton.Work) (any, error) {
			s.add(w)
			return "claimed", nil
		}, baton.ClaimOptions{LcidPrefix: prefix, LeaseMs: 5000})
		pdone <- pollerResult{rep, err}
	}()
	time.Sleep(1200 * time.Millisecond) // the poller has seen 204s by now
	o, err := raw.Acquire(ctx, L, baton.AcquireRequest{RequestID: "o1", LeaseMs: 1000})
	if _, ok := o.(*baton.Acquired); !ok || err != nil {
		t.Fatalf("o1: %#v %v", o, err)
	}
	if o, err := raw.Acquire(ctx, L, baton.AcquireRequest{RequestID: "o2"}); err != nil || o.Status() != "QUEUED" {
		t.Fatalf("o2: %#v %v", o, err)
	}
	start := time.Now()
	for _, id := range []string{"o1", "o2"} {
		v, err := raw.AwaitResult(ctx, L, id, 10*time.Second-time.Since(start))
		if err != nil || v.State != "DONE" {
			t.Fatalf("%s not done within 10 s: %+v %v", id, v, err)
		}
	}
	if v := view(t, raw, L, "o1"); v.Attempt != 2 {
		t.Fatalf("o1: %+v, want attempt 2", v)
	}
	// Later work, after more empty claims: the poller is still polling.
	time.Sleep(1500 * time.Millisecond)
	o, err = raw.Acquire(ctx, L2, baton.AcquireRequest{RequestID: "p1"})
	a, ok := o.(*baton.Acquired)
	if !ok || err != nil {
		t.Fatalf("p1: %#v %v", o, err)
	}
	if o, err := raw.Acquire(ctx, L2, baton.AcquireRequest{RequestID: "p2"}); err != nil || o.Status() != "QUEUED" {
		t.Fatalf("p2: %#v %v", o, err)
	}
	if _, err := raw.Abort(ctx, L2, baton.AbortRequest{RequestID: "p1", Token: a.Token, Reason: "gone"}); err != nil {
		t.Fatal(err)
	}
	if v, err := raw.AwaitResult(ctx, L2, "p2", 10*time.Second); err != nil || v.State != "DONE" {
		t.Fatalf("p2 not done by the poller: %+v %v", v, err)
	}
	select {
	case r := <-pdone:
		t.Fatalf("the poller stopped by itself: %v", r.err)
	default:
	}
	stop()
	r := <-pdone
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("poller returned %v", r.err)
	}
	if r.rep.Claims != 2 || r.rep.Handled != 3 || r.rep.Failed != 0 {
		t.Fatalf("the poller's report %+v, want 2 claims (L, L2), 3 handled, no failure", r.rep)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if fmt.Sprint(s.ids) != "[o1 o2 p2]" || s.att[0] != 2 {
		t.Fatalf("the poller saw %v attempts %v", s.ids, s.att)
	}
}

type pollerResult struct {
	rep *baton.ClaimReport
	err error
}

func TestConformance_requeued_request_rescued_by_poller(t *testing.T) {
	holder, poller := newClient(t), newClient(t)
	ctx := testCtx(t, 60*time.Second)
	prefix := lcid(t, "") // the poller's own: it never takes another scenario's work
	L := prefix + "L"
	var s seen
	var mu sync.Mutex
	var failures []error
	stop := make(chan struct{})
	pdone := make(chan pollerResult, 1)
	go func() { // started first, as the README's first example does
		rep, err := poller.RunClaims(ctx, func(_ context.Context, w *baton.Work) (any, error) {
			s.add(w)
			return "rescued", nil
		}, baton.ClaimOptions{LcidPrefix: prefix, LeaseMs: 5000, Stop: stop, OnError: func(err error) {
			mu.Lock()
			failures = append(failures, err)
			mu.Unlock()
		}})
		pdone <- pollerResult{rep, err}
	}()
	boom := errors.New("boom: the first attempt fails")
	rep, err := holder.Run(ctx, L, func(_ context.Context, w *baton.Work) (any, error) {
		return nil, boom
	}, baton.RunOptions{RequestID: "r1"})
	var he *baton.HandlerError
	if !errors.As(err, &he) || !errors.Is(err, boom) {
		t.Fatalf("run must return the handler's error, got %v", err)
	}
	if rep == nil || len(rep.Handled) != 0 || rep.HandledOwn || rep.RequestID != "r1" {
		t.Fatalf("the failed run's report %+v", rep)
	}
	// Nobody submits anything more on L: only the poller can do r1 now.
	v, err := holder.AwaitResult(ctx, L, "r1", 10*time.Second)
	if err != nil || v.State != "DONE" || v.Attempt != 2 || string(v.Result) != `"rescued"` {
		t.Fatalf("r1 not done by the poller within 10 s with attempt 2: %+v %v", v, err)
	}
	close(stop)
	r := <-pdone
	mu.Lock()
	defer mu.Unlock()
	if r.err != nil || r.rep.Claims != 1 || r.rep.Handled != 1 || r.rep.Failed != 0 || len(failures) != 0 {
		t.Fatalf("the poller's report %+v, %v, failures %v: want 1 claim, 1 handled, no failure", r.rep, r.err, failures)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if fmt.Sprint(s.ids) != "[r1]" || s.att[0] != 2 {
		t.Fatalf("the poller saw %v attempts %v", s.ids, s.att)
	}
}

func TestConformance_released_before_own_request(t *testing.T) {
	raw, c := newClient(t), newClient(t)
	ctx := testCtx(t, 60*time.Second)
	L := lcid(t, "L")
	o, err := raw.Acquire(ctx, L, baton.AcquireRequest{RequestID: "r0", LeaseMs: 30000})
	a, isAcquired := o.(*baton.Acquired)
	if err != nil || !isAcquired {
		t.Fatalf("r0: %#v %v", o, err)
	}
	for _, r := range []baton.AcquireRequest{{RequestID: "h1"}, {RequestID: "w1", Mode: "wait"}} {
		if o, err := raw.Acquire(ctx, L, r); err != nil || o.Status() != "QUEUED" {
			t.Fatalf("%s: %#v %v", r.RequestID, o, err)
		}
	}
	if _, err := raw.Abort(ctx, L, baton.AbortRequest{RequestID: "r0", Token: a.Token, Reason: "gone"}); err != nil {
		t.Fatal(err)
	}
	// L has no holder now, and h1 at its head.
	var events []string
	var subs []baton.Submitted
	rep, err := c.Run(ctx, L, func(_ context.Context, w *baton.Work) (any, error) {
		for _, r := range w.Requests {
			events = append(events, "handler "+r.RequestID)
		}
		return "done by r2's holder", nil
	}, baton.RunOptions{RequestID: "r2", OnSubmit: func(s baton.Submitted) {
		subs = append(subs, s)
		events = append(events, "submit")
	}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(events) != "[submit handler h1]" || len(subs) != 1 || subs[0].Lcid != L || subs[0].RequestID != "r2" {
		t.Fatalf("events %v, onSubmit %+v", events, subs)
	}
	if _, isNext := subs[0].Outcome.(*baton.Next); !isNext {
		t.Fatalf("onSubmit's outcome %#v, want NEXT", subs[0].Outcome)
	}
	if rep.Status != "RELEASED" || rep.Released == nil || rep.Released.PassedTo != "w1" || fmt.Sprint(rep.Handled) != "[h1]" ||
		rep.HandledOwn || rep.RequestID != "r2" || rep.Lcid != L {
		t.Fatalf("report %+v (released %+v)", rep, rep.Released)
	}
	if v := view(t, c, L, "r2"); v.State != "QUEUED" {
		t.Fatalf("r2 %+v: want QUEUED, done later by whoever holds L next", v)
	}
	if v := view(t, c, L, "h1"); v.State != "DONE" {
		t.Fatalf("h1 %+v", v)
	}
}

func TestConformance_turn_after_long_wait_is_live(t *testing.T) {
	w1c, w2c := newClient(t), newClient(t)
	ctx := testCtx(t, 60*time.Second)
	L := lcid(t, "L")
	t1, err := w1c.AwaitTurn(ctx, L, "w1", nil, 10000, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	held := time.Now()
	type res struct {
		turn      *baton.Turn
		err       error
		cancelled bool
	}
	done := make(chan res, 1)
	go func() {
		t2, err := w2c.AwaitTurn(ctx, L, "w2", map[string]string{"kind": "ledger"}, 1000, 20*time.Second)
		if err != nil {
			done <- res{err: err}
			return
		}
		select { // works 1500 ms: the heartbeats keep the turn
		case <-t2.Context().Done():
			done <- res{turn: t2, cancelled: true}
			return
		case <-time.After(1500 * time.Millisecond):
		}
		_, err = t2.Complete(ctx, map[string]any{"by": "w2", "fence": t2.Fence})
		done <- res{turn: t2, err: err}
	}()
	for i := 0; ; i++ { // W2's request is stored (queued behind W1)
		v, err := w1c.Request(ctx, L, "w2", 0)
		if err == nil && v.State == "QUEUED" {
			break
		}
		if i > 100 {
			t.Fatalf("w2 never queued: %+v %v", v, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Until(held.Add(3000 * time.Millisecond))) // W1 holds its turn 3000 ms
	if _, err := t1.Complete(ctx, "w1 done"); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.cancelled {
		t.Fatalf("w2's turn was not live: %v (cancelled %v)", r.err, r.cancelled)
	}
	if r.turn.Attempt != 1 || r.turn.Fence <= t1.Fence {
		t.Fatalf("w2's turn: attempt %d, fence %d (w1's %d)", r.turn.Attempt, r.turn.Fence, t1.Fence)
	}
	v := view(t, w1c, L, "w2")
	var got map[string]any
	if v.State != "DONE" || json.Unmarshal(v.Result, &got) != nil || got["by"] != "w2" {
		t.Fatalf("w2's request view %+v", v)
	}
}

func TestConformance_lock_all_crossed_no_deadlock(t *testing.T) {
	service(t) // skips here: t.Skip does not work from the goroutines below
	ctx := testCtx(t, 150*time.Second)
	A, B := lcid(t, "A"), lcid(t, "B")
	inUse := map[string]*int32{A: new(int32), B: new(int32)}
	start := time.Now()
	var wg sync.WaitGroup
	rounds := [2]int{}
	for k, order := range [][]string{{A, B}, {B, A}} {
		wg.Add(1)
		go func(k int, order []string) {
			defer wg.Done()
			c := newClient(t)
			for i := 0; i < 200; i++ {
				err := c.LockAll(ctx, order, func(hctx context.Context, fences map[string]int64) error {
					if len(fences) != 2 || fences[A] == 0 || fences[B] == 0 {
						return fmt.Errorf("fences %v", fences)
					}
					for _, l := range []string{A, B} {
						if !atomic.CompareAndSwapInt32(inUse[l], 0, 1) {
							return fmt.Errorf("round overlap on %s", l)
						}
					}
					time.Sleep(time.Millisecond)
					for _, l := range []string{A, B} {
						atomic.StoreInt32(inUse[l], 0)
					}
					return nil
				}, baton.LockAllOptions{LeaseMs: 5000, Timeout: 30 * time.Second})
				if err != nil {
					t.Errorf("caller %d round %d: %v", k, i, err)
					return
				}
				rounds[k]++
			}
		}(k, order)
	}
	wg.Wait()
	if rounds != [2]int{200, 200} || time.Since(start) > 120*time.Second {
		t.Fatalf("rounds %v in %v", rounds, time.Since(start))
	}
	t.Logf("400 rounds in %v", time.Since(start))
}

func TestConformance_proxy_502_is_typed_error(t *testing.T) {
	var hits int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		atomic.AddInt32(&hits, 1)
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "<html><body><h1>502 Bad Gateway</h1></body></html>")
	}))
	defer srv.Close()
	c := baton.New(srv.URL, baton.Options{APIKey: "k"})
	_, err := c.Acquire(context.Background(), "L", baton.AcquireRequest{RequestID: "r"})
	var u *baton.UnexpectedResponseError
	if !errors.As(err, &u) || u.Status != 502 || !strings.Contains(u.Body, "502 Bad Gateway") {
		t.Fatalf("want an UnexpectedResponseError with status 502 and the body, got %#v", err)
	}
	if n := atomic.LoadInt32(&hits); n != 1 {
		t.Fatalf("the 502 was sent %d times, want 1 (never retried)", n)
	}
}

// Not a scenario of scenarios.md: the trace context a request is submitted with comes back on
// the ACQUIRED, on every entry of a NEXT and on the request view, and reaches the work span hook.
func TestConformance_trace_context_on_next(t *testing.T) {
	const (
		tp0 = "00-11111111111111111111111111111111-1111111111111111-01"
		tp1 = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		tp2 = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
	)
	type spanKey struct{}
	var mu sync.Mutex
	var spans []baton.WorkSpan
	holder := newClientWith(t, baton.Options{Tracing: baton.Tracing{
		StartWork: func(ctx context.Context, w baton.WorkSpan) (context.Context, func(error)) {
			mu.Lock()
			spans = append(spans, w)
			mu.Unlock()
			return context.WithValue(ctx, spanKey{}, w.RequestID), nil
		}}})
	type hookKey struct{}
	submitter := newClientWith(t, baton.Options{Tracing: baton.Tracing{
		Inject: func(ctx context.Context) (string, string) {
			tp, _ := ctx.Value(hookKey{}).(string)
			return tp, ""
		}}})
	ctx := testCtx(t, 60*time.Second)
	L := lcid(t, "L")
	var got []string
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := holder.Run(ctx, L, func(hctx context.Context, w *baton.Work) (any, error) {
			mu.Lock()
			for _, r := range w.Requests {
				got = append(got, fmt.Sprintf("%s=%s;%s@%v", r.RequestID, r.TraceParent, r.TraceState, hctx.Value(spanKey{})))
			}
			mu.Unlock()
			if w.Request().RequestID == "t0" {
				close(started)
				<-release
			}
			return nil, nil
		}, baton.RunOptions{RequestID: "t0", Take: 8, TraceParent: tp0, TraceState: "own=0"})
		done <- err
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("the run ended before its handler ran: %v", err)
	}
	for _, r := range []struct {
		ctx context.Context
		req baton.AcquireRequest
	}{
		{ctx, baton.AcquireRequest{RequestID: "t1", TraceParent: tp1, TraceState: "vendor=x"}},
		{ctx, baton.AcquireRequest{RequestID: "t1", TraceParent: tp2, TraceState: "repeat=1"}}, // a repeat keeps what is stored
		{context.WithValue(ctx, hookKey{}, tp2), baton.AcquireRequest{RequestID: "t2"}},
		{ctx, baton.AcquireRequest{RequestID: "t3"}},
		{ctx, baton.AcquireRequest{RequestID: "t4", TraceParent: "not-a-traceparent", TraceState: "x=y"}},
	} {
		if o, err := submitter.Acquire(r.ctx, L, r.req); err != nil || o.Status() != "QUEUED" {
			t.Fatalf("%s: want QUEUED, got %#v, %v", r.req.RequestID, o, err)
		}
	}
	if v := view(t, submitter, L, "t1"); v.TraceParent != tp1 || v.TraceState != "vendor=x" {
		t.Fatalf("t1's view %+v", v)
	}
	if v := view(t, submitter, L, "t4"); v.TraceParent != "" || v.TraceState != "" {
		t.Fatalf("an invalid traceparent must be ignored: %+v", v)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	awaitDone(t, submitter, L, "t0", "t1", "t2", "t3", "t4")
	mu.Lock()
	defer mu.Unlock()
	want := []string{"t0=" + tp0 + ";own=0@t0", "t1=" + tp1 + ";vendor=x@t1", "t2=" + tp2 + ";@t1", "t3=;@t1", "t4=;@t1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the handler saw\n %v\nwant\n %v", got, want)
	}
	if len(spans) != 2 || spans[1].Fence <= spans[0].Fence {
		t.Fatalf("want two work spans with rising fences, got %+v", spans)
	}
	wantSpans := []baton.WorkSpan{
		{Lcid: L, RequestID: "t0", Fence: spans[0].Fence, BatchSize: 1, Links: []baton.TraceLink{{RequestID: "t0", TraceParent: tp0, TraceState: "own=0"}}},
		{Lcid: L, RequestID: "t1", Fence: spans[1].Fence, BatchSize: 4, Links: []baton.TraceLink{
			{RequestID: "t1", TraceParent: tp1, TraceState: "vendor=x"}, {RequestID: "t2", TraceParent: tp2}}},
	}
	if fmt.Sprintf("%+v", spans) != fmt.Sprintf("%+v", wantSpans) {
		t.Fatalf("work spans\n %+v\nwant\n %+v", spans, wantSpans)
	}
	turn, err := submitter.AwaitTurn(baton.WithTraceContext(ctx, tp1, "wait=1"), lcid(t, "W"), "w1", nil, 5000, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer turn.Complete(ctx, nil)
	if turn.TraceParent != tp1 || turn.TraceState != "wait=1" {
		t.Fatalf("a wait-mode turn's ACQUIRED: %q %q", turn.TraceParent, turn.TraceState)
	}
}
