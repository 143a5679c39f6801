// Package baton is the official Go client of Baton, the HTTP lock service (protocol v1.1).
//
// One entry point: baton.New(url, baton.Options{APIKey: key}), or TokenFile instead of APIKey
// for a workload token. The low-level calls (Acquire, Heartbeat, Complete, Abort, Withdraw,
// Lock, Request, Claim, DeadLetters, Redrive) map one to one onto the protocol and retry
// transient failures with the same body. On top of them: Run (the holder loop with background
// heartbeats), AwaitTurn and AwaitResult (wait mode), RunClaims (the continuous claim poller)
// and LockAll (several lcids in one global order).
package baton

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Version is the client version: the protocol version it speaks.
const Version = "1.1.0"

// Options configures a Client. Zero values mean the defaults.
type Options struct {
	// APIKey is sent as "Authorization: Bearer <APIKey>" when set. Exclusive with TokenFile.
	APIKey string
	// TokenFile is a file holding the bearer token instead, such as a Kubernetes projected
	// service-account token (/var/run/secrets/baton/token). It is read at New and again before
	// an attempt once TokenRefresh has passed since the last read, and at once after a 401 (the
	// refused attempt is repeated once when the token changed). If it cannot be read at New, or
	// APIKey is set as well, every call returns a *ConfigError (see Client.Err).
	TokenFile string
	// TokenRefresh is how long a token read from TokenFile is reused (default 30 s; negative:
	// read before every attempt).
	TokenRefresh time.Duration
	// HTTPClient replaces the default client (keep-alive transport, no client timeout: each
	// attempt has its own, see Timeout). Its Timeout, if set, must exceed the longest long-poll.
	HTTPClient *http.Client
	// Timeout bounds one attempt of a call (default 10 s). A long-poll attempt gets waitMs + 5 s.
	Timeout time.Duration
	// RetryTimeout bounds all attempts of one call when its context has no deadline (default 30 s).
	RetryTimeout time.Duration
	// BackoffBase and BackoffCap shape the full-jitter backoff (defaults 100 ms and 5 s).
	BackoffBase, BackoffCap time.Duration
	// Logger receives what the background loops cannot return (heartbeat failures, claim
	// poller errors). Default: the standard logger. Use log.New(io.Discard, "", 0) to silence.
	Logger *log.Logger
	// Tracing hooks the application's tracer in: the trace context sent with a new request,
	// and the span the holder runs the handler in. Zero: no tracing (see Tracing).
	Tracing Tracing
}

// Client talks to one Baton service. It is safe for concurrent use; share one per process.
type Client struct {
	base   string
	opts   Options
	http   *http.Client
	jitter *jitter
	log    *log.Logger
	auth   *bearer
	err    error // a *ConfigError returned by every call
}

// New returns a client for the service at baseURL (e.g. "http://localhost:8080").
func New(baseURL string, opts Options) *Client {
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.RetryTimeout <= 0 {
		opts.RetryTimeout = 30 * time.Second
	}
	if opts.BackoffBase <= 0 {
		opts.BackoffBase = 100 * time.Millisecond
	}
	if opts.BackoffCap <= 0 {
		opts.BackoffCap = 5 * time.Second
	}
	if opts.TokenRefresh == 0 {
		opts.TokenRefresh = 30 * time.Second
	}
	hc := opts.HTTPClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConns = 256
		tr.MaxIdleConnsPerHost = 64
		hc = &http.Client{Transport: tr}
	}
	lg := opts.Logger
	if lg == nil {
		lg = log.Default()
	}
	c := &Client{base: strings.TrimRight(baseURL, "/"), opts: opts, http: hc, jitter: newJitter(), log: lg}
	c.auth, c.err = newBearer(opts, lg)
	return c
}

// Err is the *ConfigError every call of the client returns, nil when its Options are usable.
// New cannot return an error: check Err after it to fail at start rather than at the first call.
func (c *Client) Err() error { return c.err }

// callOpts: longPollMs > 0 gives the attempt a read timeout of longPollMs + 5 s; a non-zero
// deadline bounds the retries (the holder's lease deadline for heartbeats).
type callOpts struct {
	longPollMs int
	deadline   time.Time
	header     map[string]string // extra headers of every attempt
}

// do sends one call with retries. It returns the status and body of the answer and the send
// time of the attempt that got it (a holder's lease counts from there, on the monotonic clock).
func (c *Client) do(ctx context.Context, method, path string, body any, co callOpts) (int, []byte, time.Time, error) {
	if c.err != nil {
		return 0, nil, time.Time{}, c.err
	}
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return 0, nil, time.Time{}, fmt.Errorf("baton: encoding the body of %s %s: %w", method, path, err)
		}
	}
	deadline := co.deadline
	if deadline.IsZero() {
		if d, ok := ctx.Deadline(); ok {
			deadline = d
		} else {
			deadline = time.Now().Add(c.opts.RetryTimeout)
		}
	}
	attemptTimeout := c.opts.Timeout
	if co.longPollMs > 0 {
		attemptTimeout = time.Duration(co.longPollMs)*time.Millisecond + 5*time.Second
		if co.deadline.IsZero() {
			// The retry budget starts after the held call, not during it.
			if _, ok := ctx.Deadline(); !ok {
				deadline = deadline.Add(attemptTimeout)
			}
		}
	}
	reread := false
	for attempt := 0; ; attempt++ {
		sentAt := time.Now()
		auth := c.auth.header(false)
		status, data, err := c.once(ctx, method, path, payload, auth, co.header, attemptTimeout, deadline)
		if err == nil {
			return status, data, sentAt, nil
		}
		// The token file may have been replaced since the last read. Once only: a 401 with the
		// new token is the token's own refusal.
		if status == http.StatusUnauthorized && !reread && ctx.Err() == nil && time.Now().Before(deadline) {
			reread = true
			if c.auth.renewed(auth) {
				continue
			}
		}
		if ctx.Err() != nil || !retryable(err) {
			return status, data, sentAt, err
		}
		var retryAfter time.Duration
		var p *ProblemError
		if errors.As(err, &p) && p.RetryAfter > 0 {
			retryAfter = time.Duration(p.RetryAfter) * time.Second
		}
		sleep := c.jitter.backoff(attempt, c.opts.BackoffBase, c.opts.BackoffCap, retryAfter)
		if !time.Now().Add(sleep).Before(deadline) {
			return status, data, sentAt, err
		}
		if !sleepCtx(ctx, sleep) {
			return status, data, sentAt, err
		}
	}
}

// once is one attempt: the answer on 2xx, else a *ProblemError, *UnexpectedResponseError or
// *TransportError.
func (c *Client) once(ctx context.Context, method, path string, payload []byte, auth string, header map[string]string,
	timeout time.Duration, deadline time.Time) (int, []byte, error) {
	if left := time.Until(deadline); left < timeout {
		timeout = left
	}
	if timeout <= 0 {
		return 0, nil, &TransportError{Method: method, Path: path, Err: context.DeadlineExceeded}
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(actx, method, c.base+path, rd)
	if err != nil {
		return 0, nil, fmt.Errorf("baton: building %s %s: %w", method, path, err)
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, application/problem+json")
	req.Header.Set("User-Agent", "baton-go/"+Version)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, &TransportError{Method: method, Path: path, Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return 0, nil, &TransportError{Method: method, Path: path, Err: err}
	}
	ct := resp.Header.Get("Content-Type")
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp.StatusCode, data, nil
	}
	if p := parseProblem(resp.StatusCode, ct, data); p != nil {
		if ra, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); err == nil && ra > 0 {
			p.RetryAfter = ra
		}
		return resp.StatusCode, data, p
	}
	text := string(data)
	if len(text) > 64<<10 {
		text = text[:64<<10]
	}
	return resp.StatusCode, data, &UnexpectedResponseError{Status: resp.StatusCode, ContentType: ct, Body: text,
		Reason: "not a problem+json answer"}
}

// parseProblem reads a problem+json body; nil when the answer is not one (a proxy's page).
func parseProblem(status int, contentType string, data []byte) *ProblemError {
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt != "application/problem+json" && mt != "application/json" {
		return nil
	}
	var doc struct {
		Type             string          `json:"type"`
		Title            string          `json:"title"`
		Code             string          `json:"code"`
		Detail           string          `json:"detail"`
		Field            string          `json:"field"`
		State            string          `json:"state"`
		Attempt          int             `json:"attempt"`
		Result           json.RawMessage `json:"result"`
		ActiveRequestIDs []string        `json:"activeRequestIds"`
	}
	if json.Unmarshal(data, &doc) != nil || doc.Code == "" {
		return nil
	}
	return &ProblemError{Status: status, Code: doc.Code, Type: doc.Type, Title: doc.Title, Detail: doc.Detail,
		Field: doc.Field, State: doc.State, Attempt: doc.Attempt, Result: doc.Result,
		ActiveRequestIDs: doc.ActiveRequestIDs, Body: data}
}

func lockPath(lcid string, rest ...string) string {
	p := "/v1/locks/" + url.PathEscape(lcid)
	for _, r := range rest {
		p += "/" + r
	}
	return p
}

// ---- the calls -------------------------------------------------------------------------

// AcquireRequest is the body of acquire. Zero values are not sent (the service defaults apply).
type AcquireRequest struct {
	RequestID string `json:"requestId"`
	Payload   any    `json:"payload,omitempty"`
	LeaseMs   int    `json:"leaseMs,omitempty"`
	Mode      string `json:"mode,omitempty"`   // "handoff" (default) or "wait"
	WaitMs    int    `json:"waitMs,omitempty"` // wait mode: long-poll until the turn, at most 30000
	Take      int    `json:"take,omitempty"`   // NEXT: how many queued requests at once, 1 to 100
	// TraceParent and TraceState are sent as the W3C traceparent and tracestate headers, not in
	// the body. "" means ctx's (WithTraceContext), else the Tracing.Inject hook's, else none.
	TraceParent string `json:"-"`
	TraceState  string `json:"-"`
}

// Acquire takes the lock for a request, queues it, or rescues a stranded queue:
// *Acquired, *Queued or *Next.
func (c *Client) Acquire(ctx context.Context, lcid string, r AcquireRequest) (Outcome, error) {
	o, _, err := c.acquire(ctx, lcid, r)
	return o, err
}

func (c *Client) acquire(ctx context.Context, lcid string, r AcquireRequest) (Outcome, time.Time, error) {
	co := callOpts{longPollMs: r.WaitMs}
	if tp, ts := c.outgoingTrace(ctx, r); tp != "" {
		co.header = map[string]string{"traceparent": tp}
		if ts != "" {
			co.header["tracestate"] = ts
		}
	}
	status, data, sentAt, err := c.do(ctx, "POST", lockPath(lcid, "acquire"), r, co)
	if err != nil {
		return nil, sentAt, err
	}
	o, err := parseOutcome(status, data)
	return o, sentAt, err
}

type heartbeatBody struct {
	Token   string `json:"token"`
	LeaseMs int    `json:"leaseMs,omitempty"`
}

// Heartbeat renews the holder's lease (leaseMs 0: the lease in force). LOCK_LOST when the
// lease already ran out or the lock moved on.
func (c *Client) Heartbeat(ctx context.Context, lcid, token string, leaseMs int) (*Acquired, error) {
	a, _, err := c.heartbeat(ctx, lcid, token, leaseMs, time.Time{})
	return a, err
}

func (c *Client) heartbeat(ctx context.Context, lcid, token string, leaseMs int, deadline time.Time) (*Acquired, time.Time, error) {
	status, data, sentAt, err := c.do(ctx, "POST", lockPath(lcid, "heartbeat"), heartbeatBody{token, leaseMs}, callOpts{deadline: deadline})
	if err != nil {
		return nil, sentAt, err
	}
	o, err := parseOutcome(status, data)
	if err != nil {
		return nil, sentAt, err
	}
	a, ok := o.(*Acquired)
	if !ok {
		return nil, sentAt, &UnexpectedResponseError{Status: status, Body: string(data), Reason: "heartbeat answered " + o.Status()}
	}
	return a, sentAt, nil
}

// Completion is one entry of a batch complete.
type Completion struct {
	RequestID string `json:"requestId"`
	Result    any    `json:"result,omitempty"`
}

// CompleteRequest is the body of complete: RequestID (+ Result) for one request, or
// Completed for a whole batch.
type CompleteRequest struct {
	Token     string       `json:"token"`
	RequestID string       `json:"requestId,omitempty"`
	Result    any          `json:"result,omitempty"`
	Completed []Completion `json:"completed,omitempty"`
	Take      int          `json:"take,omitempty"`
}

// Complete finishes the active request (or batch): *Next (the next work) or *Released.
func (c *Client) Complete(ctx context.Context, lcid string, r CompleteRequest) (Outcome, error) {
	o, _, err := c.complete(ctx, lcid, r)
	return o, err
}

func (c *Client) complete(ctx context.Context, lcid string, r CompleteRequest) (Outcome, time.Time, error) {
	status, data, sentAt, err := c.do(ctx, "POST", lockPath(lcid, "complete"), r, callOpts{})
	if err != nil {
		return nil, sentAt, err
	}
	o, err := parseOutcome(status, data)
	return o, sentAt, err
}

// AbortRequest is the body of abort. With Token it is the holder giving up (the whole active
// batch); without, a waiter's withdrawal (see Withdraw).
type AbortRequest struct {
	RequestID string `json:"requestId"`
	Token     string `json:"token,omitempty"`
	Requeue   bool   `json:"requeue,omitempty"`
	Reason    string `json:"reason,omitempty"` // at most 1024 characters
}

// Abort gives up the active request(s), or withdraws a queued one without Token.
func (c *Client) Abort(ctx context.Context, lcid string, r AbortRequest) (*Released, error) {
	r.Reason = cutReason(r.Reason)
	status, data, _, err := c.do(ctx, "POST", lockPath(lcid, "abort"), r, callOpts{})
	if err != nil {
		return nil, err
	}
	return asReleased(status, data)
}

// Withdraw takes a queued request out of the queue (ABORTED with reason). NOT_QUEUED when it
// no longer waits (its turn was granted, or it ended), NOT_FOUND when unknown.
func (c *Client) Withdraw(ctx context.Context, lcid, requestID, reason string) (*Released, error) {
	return c.Abort(ctx, lcid, AbortRequest{RequestID: requestID, Reason: reason})
}

func asReleased(status int, data []byte) (*Released, error) {
	o, err := parseOutcome(status, data)
	if err != nil {
		return nil, err
	}
	r, ok := o.(*Released)
	if !ok {
		return nil, &UnexpectedResponseError{Status: status, Body: string(data), Reason: "expected RELEASED, got " + o.Status()}
	}
	return r, nil
}

// cutReason keeps a reason within the service's 1024 characters (runes, not bytes).
func cutReason(s string) string {
	r := []rune(s)
	if len(r) > 1024 {
		return string(r[:1024])
	}
	return s
}

func decode[T any](status int, data []byte) (*T, error) {
	v := new(T)
	if err := json.Unmarshal(data, v); err != nil {
		return nil, &UnexpectedResponseError{Status: status, Body: string(data), Reason: "body does not parse: " + err.Error()}
	}
	return v, nil
}

// Lock reads the lock view of lcid (never the token).
func (c *Client) Lock(ctx context.Context, lcid string) (*LockView, error) {
	status, data, _, err := c.do(ctx, "GET", lockPath(lcid), nil, callOpts{})
	if err != nil {
		return nil, err
	}
	return decode[LockView](status, data)
}

// Request reads where a request stands. waitMs > 0 holds the call until it has ended or
// waitMs passed (long-poll, at most 30000).
func (c *Client) Request(ctx context.Context, lcid, requestID string, waitMs int) (*RequestView, error) {
	p := lockPath(lcid, "requests", url.PathEscape(requestID))
	if waitMs > 0 {
		p += "?waitMs=" + strconv.Itoa(waitMs)
	}
	status, data, _, err := c.do(ctx, "GET", p, nil, callOpts{longPollMs: waitMs})
	if err != nil {
		return nil, err
	}
	return decode[RequestView](status, data)
}

// ClaimRequest is the body of a claim.
type ClaimRequest struct {
	LeaseMs    int    `json:"leaseMs,omitempty"`
	Take       int    `json:"take,omitempty"`
	LcidPrefix string `json:"lcidPrefix,omitempty"`
}

// Claim takes orphaned work of any lcid of the tenant: a *Next, or nil (and no error) on 204.
// A claim is not replayed by the service; use RunClaims rather than calling it in a drain loop.
func (c *Client) Claim(ctx context.Context, r ClaimRequest) (*Next, error) {
	n, _, err := c.claim(ctx, r)
	return n, err
}

func (c *Client) claim(ctx context.Context, r ClaimRequest) (*Next, time.Time, error) {
	status, data, sentAt, err := c.do(ctx, "POST", "/v1/claims", r, callOpts{})
	if err != nil || status == http.StatusNoContent {
		return nil, sentAt, err
	}
	o, err := parseOutcome(status, data)
	if err != nil {
		return nil, sentAt, err
	}
	n, ok := o.(*Next)
	if !ok {
		return nil, sentAt, &UnexpectedResponseError{Status: status, Body: string(data), Reason: "claim answered " + o.Status()}
	}
	return n, sentAt, nil
}

// DeadLetters lists the tenant's DEAD requests, newest first (admin key; limit 0: default 50).
func (c *Client) DeadLetters(ctx context.Context, limit int) (*DeadLetters, error) {
	p := "/v1/dead-letters"
	if limit > 0 {
		p += "?limit=" + strconv.Itoa(limit)
	}
	status, data, _, err := c.do(ctx, "GET", p, nil, callOpts{})
	if err != nil {
		return nil, err
	}
	return decode[DeadLetters](status, data)
}

// Redrive queues a DEAD request again with attempt 1 (admin key). NOT_DEAD after a retry
// that already succeeded: treat that as done.
func (c *Client) Redrive(ctx context.Context, lcid, requestID string) (*Queued, error) {
	status, data, _, err := c.do(ctx, "POST", lockPath(lcid, "requests", url.PathEscape(requestID), "retry"), nil, callOpts{})
	if err != nil {
		return nil, err
	}
	return decode[Queued](status, data)
}
