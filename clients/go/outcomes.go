package baton

// The answers of the calls: outcomes and views (part of the calls, with calls.go).

import (
	"encoding/json"
	"fmt"
)

// Outcome is the answer of acquire, complete and claim: one of *Acquired, *Queued, *Next,
// *Released. Branch with a type switch (the protocol says: branch on status, not on the HTTP
// code, ACQUIRED and NEXT are both 200).
type Outcome interface {
	Status() string
	LCID() string
}

// Acquired: you hold the lock; work on your own request.
type Acquired struct {
	Lcid      string `json:"lcid"`
	RequestID string `json:"requestId"`
	Token     string `json:"token"`
	Fence     int64  `json:"fence"`
	LeaseMs   int    `json:"leaseMs"`
	ExpiresAt string `json:"expiresAt"`
	// Attempt: which attempt of the request this grant is for (protocol v1.2): 1 for a fresh
	// grant, more for a wait request's turn that is being redone. 1 when the service sends
	// none (an older service, or a heartbeat's answer).
	Attempt int `json:"attempt"`
	// TraceParent and TraceState: the W3C trace context the request was submitted with ("" when
	// none). A heartbeat's answer never carries them.
	TraceParent string `json:"traceparent,omitempty"`
	TraceState  string `json:"tracestate,omitempty"`
}

// Queued: the lock is busy; the request is stored at Position (1 = next).
type Queued struct {
	Lcid        string `json:"lcid"`
	RequestID   string `json:"requestId"`
	Position    int    `json:"position"`
	QueueLength int    `json:"queueLength"`
}

// Next: you hold the lock; work on Requests (one, or a batch under one fence).
type Next struct {
	Lcid      string `json:"lcid"`
	Token     string `json:"token"`
	Fence     int64  `json:"fence"`
	LeaseMs   int    `json:"leaseMs"`
	ExpiresAt string `json:"expiresAt"`
	Request   Item   `json:"request"`
	Requests  []Item `json:"requests"`
}

// Released: nothing more for you. PassedTo names the wait request the lock went to, if any.
type Released struct {
	Lcid     string `json:"lcid"`
	Pending  int    `json:"pending"`
	PassedTo string `json:"passedTo,omitempty"`
}

func (*Acquired) Status() string { return "ACQUIRED" }
func (*Queued) Status() string   { return "QUEUED" }
func (*Next) Status() string     { return "NEXT" }
func (*Released) Status() string { return "RELEASED" }
func (o *Acquired) LCID() string { return o.Lcid }
func (o *Queued) LCID() string   { return o.Lcid }
func (o *Next) LCID() string     { return o.Lcid }
func (o *Released) LCID() string { return o.Lcid }

// Item is one request handed to a holder.
type Item struct {
	RequestID string          `json:"requestId"`
	Payload   json.RawMessage `json:"payload,omitempty"` // nil when the request has none
	Attempt   int             `json:"attempt"`
	// TraceParent and TraceState: the W3C trace context the request was submitted with ("" when
	// none); the holder links its work span to it (see Tracing).
	TraceParent string `json:"traceparent,omitempty"`
	TraceState  string `json:"tracestate,omitempty"`
}

// items is every request of a NEXT, request first (servers before v1.1 send only request).
func (o *Next) items() []Item {
	if len(o.Requests) > 0 {
		return o.Requests
	}
	return []Item{o.Request}
}

func parseOutcome(status int, body []byte) (Outcome, error) {
	var head struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return nil, &UnexpectedResponseError{Status: status, Body: string(body), Reason: "body is not JSON: " + err.Error()}
	}
	var o Outcome
	switch head.Status {
	case "ACQUIRED":
		o = &Acquired{}
	case "QUEUED":
		o = &Queued{}
	case "NEXT":
		o = &Next{}
	case "RELEASED":
		o = &Released{}
	default:
		return nil, &UnexpectedResponseError{Status: status, Body: string(body), Reason: fmt.Sprintf("unknown status %q", head.Status)}
	}
	if err := json.Unmarshal(body, o); err != nil {
		return nil, &UnexpectedResponseError{Status: status, Body: string(body), Reason: err.Error()}
	}
	if a, ok := o.(*Acquired); ok && a.Attempt < 1 {
		a.Attempt = 1
	}
	return o, nil
}

// LockView is GET /v1/locks/{lcid}. Fence is nil when no fence is known.
type LockView struct {
	Lcid             string   `json:"lcid"`
	Held             bool     `json:"held"`
	Fence            *int64   `json:"fence"`
	ActiveRequestID  string   `json:"activeRequestId"`
	ActiveRequestIDs []string `json:"activeRequestIds"`
	HeldForMs        int64    `json:"heldForMs"`
	LeaseRemainingMs int64    `json:"leaseRemainingMs"`
	QueueLength      int      `json:"queueLength"`
}

// RequestView is GET /v1/locks/{lcid}/requests/{requestId}.
type RequestView struct {
	Lcid      string          `json:"lcid"`
	RequestID string          `json:"requestId"`
	State     string          `json:"state"` // QUEUED, ACTIVE, DONE, ABORTED, DEAD
	Position  int             `json:"position"`
	Attempt   int             `json:"attempt"`
	Fence     int64           `json:"fence"`
	Result    json.RawMessage `json:"result"`
	Reason    string          `json:"reason"`
	// TraceParent and TraceState: the W3C trace context the request was submitted with ("" when none).
	TraceParent string `json:"traceparent"`
	TraceState  string `json:"tracestate"`
}

// Ended says whether the request reached DONE, ABORTED or DEAD.
func (v *RequestView) Ended() bool {
	return v.State == "DONE" || v.State == "ABORTED" || v.State == "DEAD"
}

// DeadLetter is one entry of GET /v1/dead-letters.
type DeadLetter struct {
	Lcid      string          `json:"lcid"`
	RequestID string          `json:"requestId"`
	Attempts  int             `json:"attempts"`
	Reason    string          `json:"reason"`
	Payload   json.RawMessage `json:"payload"`
	DiedAt    string          `json:"diedAt"`
}

// DeadLetters is the answer of GET /v1/dead-letters.
type DeadLetters struct {
	Items []DeadLetter `json:"items"`
	Count int          `json:"count"`
}
