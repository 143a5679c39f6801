// Package baton is the official Go client of Baton, the HTTP lock service (protocol v1.2).
//
// One entry point: baton.New(url, baton.Options{APIKey: key}), or TokenFile instead of APIKey
// for a workload token. The low-level calls (Acquire, Heartbeat, Complete, Abort, Withdraw,
// Lock, Request, Claim, DeadLetters, RetryDeadLetter) map one to one onto the protocol and retry
// transient failures with the same body. On top of them: Run (the holder loop with background
// heartbeats), AwaitTurn and AwaitResult (wait mode), RunClaims (the continuous claim poller)
// and LockAll (several lcids in one global order).
//
// A request nobody holds (its handler failed, its holder died) is done only by a claim poller
// or the next acquire on its lcid: every deployment that uses Run runs RunClaims for its kind
// of lcids, in the same process or another.
//
// The parts, each in its own files, use each other one way only (TestUnit_LayersImportOneWay
// checks it): errors.go <- the transport (http.go, auth.go, tracing.go) <- the retries
// (retries.go) <- the calls (calls.go, outcomes.go) <- the holder (holder.go) <- wait mode
// (wait.go, lockall.go) <- the claim poller (claims.go) <- this facade.
package baton

// Client talks to one Baton service. It is safe for concurrent use; share one per process
// (keep-alive connections). Its methods are those of the parts: the calls, Run, AwaitTurn,
// AwaitResult, LockAll and RunClaims.
type Client struct {
	*calls
}

// New returns a client for the service at baseURL (e.g. "http://localhost:8080").
func New(baseURL string, opts Options) *Client {
	return &Client{&calls{&retrier{transport: newTransport(baseURL, opts), jitter: newJitter()}}}
}

// Err is the *ConfigError every call of the client returns, nil when its Options are usable.
// New cannot return an error: check Err after it to fail at start rather than at the first call.
func (c *Client) Err() error { return c.err }
