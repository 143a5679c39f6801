package baton_test

// The README's first example, compiled (go vet and go test build it; it has no Output, so it
// does not run). TestUnit_ReadmeFirstExample keeps the two the same.

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	baton "github.com/baton-dev/baton/clients/go"
)

// orders stands for the application's database: it refuses a write whose fence is lower than
// the last one it accepted for that entity.
type orders struct{}

func (orders) ApplyFenced(ctx context.Context, lcid string, fence int64, payload json.RawMessage) error {
	return nil
}

var db orders

func ExampleClient_Run() {
	ctx := context.Background()
	// --- README
	client := baton.New("http://localhost:8080", baton.Options{APIKey: os.Getenv("BATON_API_KEY")})
	ship := func(ctx context.Context, w *baton.Work) (any, error) {
		// ctx is cancelled if the lock is lost: stop writing then. The fence guards the database.
		if err := db.ApplyFenced(ctx, w.Lcid, w.Fence, w.Request().Payload); err != nil {
			return nil, err // aborted with requeue: the claim poller does it again (DEAD after maxAttempts)
		}
		return map[string]string{"status": "shipped"}, nil // the request's result
	}
	go client.RunClaims(ctx, ship, baton.ClaimOptions{LcidPrefix: "order-"}) // work nobody holds
	report, err := client.Run(ctx, "order-42", ship, baton.RunOptions{RequestID: "ship-42", Payload: map[string]int{"qty": 1}})
	// report.Status: "RELEASED" (held the lock until nothing was left; report.HandledOwn says if
	// ship-42 was among the work) or "QUEUED" (stored: the holder of order-42 or a poller does it).
	// --- README
	_, _ = report, err
}

func TestUnit_ReadmeFirstExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := string(readme)
	start := strings.Index(block, "```go\n")
	block = block[start+len("```go\n"):]
	block = block[:strings.Index(block, "```")]
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(string(src), "\t// --- README\n")
	var example []string
	for _, line := range strings.Split(parts[1], "\n") {
		example = append(example, strings.TrimPrefix(line, "\t"))
	}
	if got := strings.Join(example, "\n"); got != block {
		t.Fatalf("the README's first example and ExampleClient_Run differ:\n%s\n---\n%s", block, got)
	}
}
