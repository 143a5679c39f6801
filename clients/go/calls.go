package baton

// The calls: one method per endpoint of the protocol, with its body, its outcome and its typed
// errors (outcomes.go holds the answers). Uses the retries (retries.go) and the transport.

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// calls is the protocol's calls over a retrier. The holder, the waits and the claim poller
// add their methods to it; Client (the facade) offers them all.
type calls struct {
	*retrier
}

func lockPath(lcid string, rest ...string) string {
	p := "/v1/locks/" + url.PathEscape(lcid)
	for _, r := range rest {
		p += "/" + r
	}
	return p
}

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
func (c *calls) Acquire(ctx context.Context, lcid string, r AcquireRequest) (Outcome, error) {
	o, _, err := c.acquire(ctx, lcid, r)
	return o, err
}

// acquire also gives the reply: when it was sent (a grant's lease counts from its first
// attempt: a repeat replays the grant) and whether an earlier attempt may have stored it.
func (c *calls) acquire(ctx context.Context, lcid string, r AcquireRequest) (Outcome, reply, error) {
	co := callOpts{longPollMs: r.WaitMs}
	if tp, ts := c.opts.Tracing.outgoing(ctx, r.TraceParent, r.TraceState); tp != "" {
		co.header = map[string]string{"traceparent": tp}
		if ts != "" {
			co.header["tracestate"] = ts
		}
	}
	rep, err := c.do(ctx, "POST", lockPath(lcid, "acquire"), r, co)
	if err != nil {
		return nil, rep, err
	}
	o, err := parseOutcome(rep.status, rep.body)
	return o, rep, err
}

type heartbeatBody struct {
	Token   string `json:"token"`
	LeaseMs int    `json:"leaseMs,omitempty"`
}

// Heartbeat renews the holder's lease (leaseMs 0: the lease in force). LOCK_LOST when the
// lease already ran out or the lock moved on.
func (c *calls) Heartbeat(ctx context.Context, lcid, token string, leaseMs int) (*Acquired, error) {
	a, _, err := c.heartbeat(ctx, lcid, token, leaseMs, time.Time{})
	return a, err
}

// heartbeat also gives the send time of the attempt that got the answer: every attempt
// renews, so the lease counts from the last one. Retries stop at deadline (if not zero).
func (c *calls) heartbeat(ctx context.Context, lcid, token string, leaseMs int, deadline time.Time) (*Acquired, time.Time, error) {
	rep, err := c.do(ctx, "POST", lockPath(lcid, "heartbeat"), heartbeatBody{token, leaseMs}, callOpts{deadline: deadline})
	if err != nil {
		return nil, rep.sentAt, err
	}
	o, err := parseOutcome(rep.status, rep.body)
	if err != nil {
		return nil, rep.sentAt, err
	}
	a, ok := o.(*Acquired)
	if !ok {
		return nil, rep.sentAt, &UnexpectedResponseError{Status: rep.status, Body: string(rep.body), Reason: "heartbeat answered " + o.Status()}
	}
	return a, rep.sentAt, nil
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
func (c *calls) Complete(ctx context.Context, lcid string, r CompleteRequest) (Outcome, error) {
	o, _, err := c.complete(ctx, lcid, r)
	return o, err
}

// complete also gives the send time of its first attempt: a NEXT's lease starts when the
// first attempt that got through was processed, and a repeat replays it without renewing.
func (c *calls) complete(ctx context.Context, lcid string, r CompleteRequest) (Outcome, time.Time, error) {
	rep, err := c.do(ctx, "POST", lockPath(lcid, "complete"), r, callOpts{})
	if err != nil {
		return nil, rep.firstSent, err
	}
	o, err := parseOutcome(rep.status, rep.body)
	return o, rep.firstSent, err
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
func (c *calls) Abort(ctx context.Context, lcid string, r AbortRequest) (*Released, error) {
	r.Reason = cutReason(r.Reason)
	rep, err := c.do(ctx, "POST", lockPath(lcid, "abort"), r, callOpts{})
	if err != nil {
		return nil, err
	}
	return asReleased(rep.status, rep.body)
}

// Withdraw takes a queued request out of the queue (ABORTED with reason). NOT_QUEUED when it
// no longer waits (its turn was granted, or it ended), NOT_FOUND when unknown.
func (c *calls) Withdraw(ctx context.Context, lcid, requestID, reason string) (*Released, error) {
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
func (c *calls) Lock(ctx context.Context, lcid string) (*LockView, error) {
	rep, err := c.do(ctx, "GET", lockPath(lcid), nil, callOpts{})
	if err != nil {
		return nil, err
	}
	return decode[LockView](rep.status, rep.body)
}

// Request reads where a request stands. waitMs > 0 holds the call until it has ended or
// waitMs passed (long-poll, at most 30000).
func (c *calls) Request(ctx context.Context, lcid, requestID string, waitMs int) (*RequestView, error) {
	p := lockPath(lcid, "requests", url.PathEscape(requestID))
	if waitMs > 0 {
		p += "?waitMs=" + strconv.Itoa(waitMs)
	}
	rep, err := c.do(ctx, "GET", p, nil, callOpts{longPollMs: waitMs})
	if err != nil {
		return nil, err
	}
	return decode[RequestView](rep.status, rep.body)
}

// ClaimRequest is the body of a claim.
type ClaimRequest struct {
	LeaseMs    int    `json:"leaseMs,omitempty"`
	Take       int    `json:"take,omitempty"`
	LcidPrefix string `json:"lcidPrefix,omitempty"`
}

// Claim takes orphaned work of any lcid of the tenant: a *Next, or nil (and no error) on 204.
// A claim is not replayed by the service; use RunClaims rather than calling it in a drain loop.
func (c *calls) Claim(ctx context.Context, r ClaimRequest) (*Next, error) {
	n, _, err := c.claim(ctx, r)
	return n, err
}

// claim also gives the send time of its first attempt: a claim is not replayed, so the grant
// came from the answering attempt, but counting from the first is never later than that.
func (c *calls) claim(ctx context.Context, r ClaimRequest) (*Next, time.Time, error) {
	rep, err := c.do(ctx, "POST", "/v1/claims", r, callOpts{})
	if err != nil || rep.status == http.StatusNoContent {
		return nil, rep.firstSent, err
	}
	o, err := parseOutcome(rep.status, rep.body)
	if err != nil {
		return nil, rep.firstSent, err
	}
	n, ok := o.(*Next)
	if !ok {
		return nil, rep.firstSent, &UnexpectedResponseError{Status: rep.status, Body: string(rep.body), Reason: "claim answered " + o.Status()}
	}
	return n, rep.firstSent, nil
}

// DeadLetters lists the tenant's DEAD requests, newest first (admin key; limit 0: default 50).
func (c *calls) DeadLetters(ctx context.Context, limit int) (*DeadLetters, error) {
	p := "/v1/dead-letters"
	if limit > 0 {
		p += "?limit=" + strconv.Itoa(limit)
	}
	rep, err := c.do(ctx, "GET", p, nil, callOpts{})
	if err != nil {
		return nil, err
	}
	return decode[DeadLetters](rep.status, rep.body)
}

// RetryDeadLetter queues a DEAD request again with attempt 1 (admin key). NOT_DEAD after a retry
// that already succeeded: treat that as done.
func (c *calls) RetryDeadLetter(ctx context.Context, lcid, requestID string) (*Queued, error) {
	rep, err := c.do(ctx, "POST", lockPath(lcid, "requests", url.PathEscape(requestID), "retry"), nil, callOpts{})
	if err != nil {
		return nil, err
	}
	return decode[Queued](rep.status, rep.body)
}

// NewRequestID returns a fresh random requestId (128 bits, hex): what Run, AwaitTurn and
// LockAll use when the caller names none.
func NewRequestID() string {
	var b [16]byte
	if _, err := crand.Read(b[:]); err != nil {
		binary.LittleEndian.PutUint64(b[:], uint64(time.Now().UnixNano()))
	}
	return hex.EncodeToString(b[:])
}
