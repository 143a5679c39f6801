// A Baton worker on the official Go client (clients/go), the Go twin of
// examples/python/worker.py: the same flags, the same behaviour, the same output files
// (--db: processed.jsonl, --submitted: submitted.jsonl) that examples/e2e/check.py checks.
//
// Handoff mode (the default) submits --count requests on random lcids of --lcids and runs
// the holder loop with baton.Client.Run: work on what it is given, with the fence passed to
// the database, heartbeats in the background during long work, complete, next. QUEUED means
// another holder does the work. --take N takes batches of up to N under one fence.
//
// --mode wait: each request is a wait request done only by this worker, in its turn
// (AwaitTurn, then Turn.Complete). --claims: a continuous claim poller (RunClaims) for lcids
// starting with --lcid-prefix, until SIGTERM or --claim-seconds.
//
//	go run . --url http://localhost:8080 --lcids order-1,order-2 --count 20 --name go
//	go run . --take 8 ...                      (batch handoff)
//	go run . --mode wait --name payment ...    (the requestIds are NAME-N)
//	go run . --claims --lcid-prefix order- --name orders-claims
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	baton "github.com/baton-dev/baton/clients/go"
)

type args struct {
	url, key, lcids, name, db, submitted, mode, lcidPrefix string
	count, take, leaseMs                                   int
	claims                                                 bool
	claimSeconds                                           float64
}

// database is the simulated database: an append-only file of writes, each with its fence.
// A real one keeps the highest fence per entity and refuses a lower one.
type database struct {
	mu   sync.Mutex
	path string
}

func (d *database) write(lcid, requestID string, fence int64, worker string, batch int) {
	line, _ := json.Marshal(struct {
		Lcid      string `json:"lcid"`
		RequestID string `json:"requestId"`
		Fence     int64  `json:"fence"`
		Worker    string `json:"worker"`
		Batch     int    `json:"batch"`
	}{lcid, requestID, fence, worker, batch})
	appendLine(&d.mu, d.path, line)
}

func appendLine(mu *sync.Mutex, path string, line []byte) {
	mu.Lock()
	defer mu.Unlock()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	// One write call per line, so that lines of concurrent workers never interleave.
	if _, err := f.Write(append(line, '\n')); err != nil {
		log.Fatal(err)
	}
}

type payload struct {
	WorkMs int `json:"workMs"`
	N      int `json:"n"`
}

// doWork sleeps the request's workMs (the client heartbeats meanwhile), then writes it with
// the fence. A lost lock cancels ctx: stop before writing.
func doWork(ctx context.Context, db *database, lcid string, it baton.Item, fence int64, name string, batch int) error {
	var p payload
	p.WorkMs = 5
	if len(it.Payload) > 0 {
		json.Unmarshal(it.Payload, &p)
	}
	select {
	case <-time.After(time.Duration(p.WorkMs) * time.Millisecond):
	case <-ctx.Done():
		return ctx.Err()
	}
	db.write(lcid, it.RequestID, fence, name, batch)
	return nil
}

func handler(db *database, name string) baton.Handler {
	return func(ctx context.Context, w *baton.Work) (any, error) {
		results := map[string]any{}
		for _, it := range w.Requests {
			if err := doWork(ctx, db, w.Lcid, it, w.Fence, name, len(w.Requests)); err != nil {
				return nil, err
			}
			results[it.RequestID] = map[string]string{"by": name}
		}
		if len(w.Requests) == 1 {
			return map[string]string{"by": name}, nil
		}
		return results, nil
	}
}

func epoch(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

func main() {
	var a args
	flag.StringVar(&a.url, "url", "http://localhost:8080", "Baton's URL")
	flag.StringVar(&a.key, "key", "", "API key (when authentication is on)")
	flag.StringVar(&a.lcids, "lcids", "order-1", "comma-separated lcids to submit to")
	flag.IntVar(&a.count, "count", 10, "how many requests to submit")
	flag.StringVar(&a.name, "name", "go", "worker name; the requestIds are NAME-N")
	flag.IntVar(&a.leaseMs, "lease-ms", 2000, "lease of each grant")
	flag.StringVar(&a.db, "db", "processed.jsonl", "the simulated database (JSONL)")
	flag.StringVar(&a.submitted, "submitted", "submitted.jsonl", "where acknowledged submissions are logged (JSONL)")
	flag.StringVar(&a.mode, "mode", "handoff", "handoff or wait")
	flag.IntVar(&a.take, "take", 1, "batch handoff: requests per NEXT, 1 to 100")
	flag.BoolVar(&a.claims, "claims", false, "be a continuous claim poller, submit nothing")
	flag.StringVar(&a.lcidPrefix, "lcid-prefix", "", "claims: only lcids that start with this")
	flag.Float64Var(&a.claimSeconds, "claim-seconds", 0, "claims: stop after this long (0: on SIGTERM)")
	flag.Parse()
	if a.mode != "handoff" && a.mode != "wait" {
		fmt.Fprintln(os.Stderr, "--mode must be handoff or wait")
		os.Exit(2)
	}
	client := baton.New(a.url, baton.Options{APIKey: a.key})
	db := &database{path: a.db}
	rng := rand.New(rand.NewSource(time.Now().UnixNano() ^ int64(os.Getpid())))
	switch {
	case a.claims:
		claimPoller(client, db, a)
	case a.mode == "wait":
		waitMode(client, db, a, rng)
	default:
		handoffMode(client, db, a, rng)
	}
}

var submittedMu sync.Mutex

func logSubmitted(a args, lcid, requestID string, sentAt time.Time) {
	line, _ := json.Marshal(map[string]any{"lcid": lcid, "requestId": requestID, "sentAt": epoch(sentAt),
		"ackedAt": epoch(time.Now())})
	appendLine(&submittedMu, a.submitted, line)
}

// newPayload: every tenth request is long work that needs heartbeats.
func newPayload(i int, rng *rand.Rand) payload {
	if i%10 == 9 {
		return payload{WorkMs: 1500, N: i}
	}
	return payload{WorkMs: 1 + rng.Intn(10), N: i}
}

func handoffMode(client *baton.Client, db *database, a args, rng *rand.Rand) {
	lcids := strings.Split(a.lcids, ",")
	for i := 0; i < a.count; i++ {
		lcid := lcids[rng.Intn(len(lcids))]
		requestID := fmt.Sprintf("%s-%d", a.name, i)
		sentAt := time.Now()
		_, err := client.Run(context.Background(), lcid, handler(db, a.name), baton.RunOptions{
			RequestID: requestID, Payload: newPayload(i, rng), LeaseMs: a.leaseMs, Take: a.take,
			// Called once Baton acknowledged the request as stored, also when an acquire retried
			// after a lost answer found it taken by another holder since (Outcome nil).
			OnSubmit: func(baton.Submitted) { logSubmitted(a, lcid, requestID, sentAt) },
		})
		switch {
		case err == nil:
		case errors.Is(err, baton.ErrLockLost):
			fmt.Printf("%s: lock lost on %s (%v); the request will be redelivered\n", a.name, lcid, err)
		default:
			fmt.Printf("%s: %s: %v\n", a.name, requestID, err)
		}
	}
	// Work this submitter leaves behind (a handler error, a lock it lost) waits at the head of
	// its lcid with no holder: the claim workers (--claims) do it.
	fmt.Printf("%s: submitted %d\n", a.name, a.count)
}

func waitMode(client *baton.Client, db *database, a args, rng *rand.Rand) {
	lcids := strings.Split(a.lcids, ",")
	ctx := context.Background()
	for i := 0; i < a.count; i++ {
		lcid := lcids[rng.Intn(len(lcids))]
		requestID := fmt.Sprintf("%s-%d", a.name, i)
		p := newPayload(i, rng)
		// Submit first (answered at once: QUEUED or ACQUIRED), so the acknowledgement is logged
		// before the wait; AwaitTurn then repeats the same call as a long-poll until the turn.
		sentAt := time.Now()
		_, err := client.Acquire(ctx, lcid, baton.AcquireRequest{RequestID: requestID, Payload: p, LeaseMs: a.leaseMs, Mode: "wait"})
		if err != nil {
			fmt.Printf("%s: %s refused: %v\n", a.name, requestID, err)
			continue
		}
		logSubmitted(a, lcid, requestID, sentAt)
		turn, err := client.AwaitTurn(ctx, lcid, requestID, p, a.leaseMs, 5*time.Minute)
		if err != nil {
			fmt.Printf("%s: %s did not get its turn: %v\n", a.name, requestID, err)
			continue
		}
		raw, _ := json.Marshal(p)
		if err := doWork(turn.Context(), db, lcid, baton.Item{RequestID: requestID, Payload: raw}, turn.Fence, a.name, 1); err != nil {
			fmt.Printf("%s: lock lost on %s (%v); the request goes back to the queue\n", a.name, lcid, err)
			continue
		}
		if _, err := turn.Complete(ctx, map[string]string{"by": a.name}); err != nil {
			fmt.Printf("%s: complete of %s: %v\n", a.name, requestID, err)
		}
	}
	fmt.Printf("%s: submitted %d (wait mode)\n", a.name, a.count)
}

func claimPoller(client *baton.Client, db *database, a args) {
	stop := make(chan struct{})
	var once sync.Once
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-sigs; once.Do(func() { close(stop) }) }()
	if a.claimSeconds > 0 {
		time.AfterFunc(time.Duration(a.claimSeconds*float64(time.Second)), func() { once.Do(func() { close(stop) }) })
	}
	rep, err := client.RunClaims(context.Background(), handler(db, a.name), baton.ClaimOptions{
		LcidPrefix: a.lcidPrefix, LeaseMs: a.leaseMs, Take: a.take, Stop: stop,
		OnError: func(err error) { fmt.Printf("%s: %v\n", a.name, err) },
	})
	if err != nil {
		fmt.Printf("%s: claim poller: %v\n", a.name, err)
	}
	fmt.Printf("%s: claimed work on %d lcids, handled %d requests, %d errors\n", a.name, rep.Claims, rep.Handled, rep.Failed)
}
