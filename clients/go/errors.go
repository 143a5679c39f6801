package baton

// The typed errors of every part. This file uses no other file of the package: the transport,
// the retries, the calls and the holder all return them.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
)

// Sentinel errors for the problem codes a program branches on. A *ProblemError matches the
// sentinel of its code with errors.Is, so callers write errors.Is(err, baton.ErrLockLost)
// whether the error came straight from a call or wrapped by Run.
var (
	ErrInvalidRequest     = errors.New("baton: INVALID_REQUEST")
	ErrUnauthorized       = errors.New("baton: UNAUTHORIZED")
	ErrForbidden          = errors.New("baton: FORBIDDEN")
	ErrNotFound           = errors.New("baton: NOT_FOUND")
	ErrLockLost           = errors.New("baton: LOCK_LOST")
	ErrDuplicateRequest   = errors.New("baton: DUPLICATE_REQUEST")
	ErrNotQueued          = errors.New("baton: NOT_QUEUED")
	ErrNotDead            = errors.New("baton: NOT_DEAD")
	ErrBatchMismatch      = errors.New("baton: BATCH_MISMATCH")
	ErrPayloadTooLarge    = errors.New("baton: PAYLOAD_TOO_LARGE")
	ErrQueueFull          = errors.New("baton: QUEUE_FULL")
	ErrBackendUnavailable = errors.New("baton: BACKEND_UNAVAILABLE")
	ErrInternal           = errors.New("baton: INTERNAL_ERROR")
	// ErrTimeout is matched by the error AwaitTurn, AwaitResult and LockAll return when their
	// own timeout passed.
	ErrTimeout = errors.New("baton: timed out")
)

var sentinelByCode = map[string]error{
	"INVALID_REQUEST":     ErrInvalidRequest,
	"UNAUTHORIZED":        ErrUnauthorized,
	"FORBIDDEN":           ErrForbidden,
	"NOT_FOUND":           ErrNotFound,
	"LOCK_LOST":           ErrLockLost,
	"DUPLICATE_REQUEST":   ErrDuplicateRequest,
	"NOT_QUEUED":          ErrNotQueued,
	"NOT_DEAD":            ErrNotDead,
	"BATCH_MISMATCH":      ErrBatchMismatch,
	"PAYLOAD_TOO_LARGE":   ErrPayloadTooLarge,
	"QUEUE_FULL":          ErrQueueFull,
	"BACKEND_UNAVAILABLE": ErrBackendUnavailable,
	"INTERNAL_ERROR":      ErrInternal,
}

// ProblemError is an application/problem+json answer of the service (RFC 9457). Match on Code
// (or errors.Is with a sentinel), never on Detail.
type ProblemError struct {
	Status int    // the HTTP status
	Code   string // the machine code, e.g. LOCK_LOST
	Type   string // urn:baton:problem:...
	Title  string
	Detail string
	Field  string // the offending field's path (INVALID_REQUEST, PAYLOAD_TOO_LARGE)
	// State and Attempt: where a known request stands (DUPLICATE_REQUEST, NOT_QUEUED, NOT_DEAD).
	State   string
	Attempt int
	// Result: the stored result of a DONE request (DUPLICATE_REQUEST).
	Result json.RawMessage
	// ActiveRequestIDs: the requests active under the caller's token (BATCH_MISMATCH).
	ActiveRequestIDs []string
	// RetryAfter is the Retry-After header in seconds (429, 503), 0 when absent.
	RetryAfter int
	// Body is the whole problem document as received.
	Body []byte
}

func (e *ProblemError) Error() string {
	s := fmt.Sprintf("baton: %d %s", e.Status, e.Code)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Field != "" {
		s += " (field " + e.Field + ")"
	}
	return s
}

// Is makes errors.Is(err, ErrLockLost) and the like true for a problem of that code.
func (e *ProblemError) Is(target error) bool {
	s, ok := sentinelByCode[e.Code]
	return ok && s == target
}

// UnexpectedResponseError is an answer that is not what the protocol defines: not
// problem+json for an error status (a proxy's HTML 502), or a success body that does not
// parse. Never retried: such an answer did not come from Baton's idempotent logic.
type UnexpectedResponseError struct {
	Status      int
	ContentType string
	Body        string // the body text (cut to 64 KiB)
	Reason      string
}

func (e *UnexpectedResponseError) Error() string {
	body := e.Body
	if len(body) > 200 {
		body = body[:200] + "..."
	}
	return fmt.Sprintf("baton: unexpected response %d (%s): %s: %q", e.Status, e.ContentType, e.Reason, body)
}

// TransportError is a network failure (connection refused, reset, timeout) that outlasted the
// retries. Host is the service's host:port, so that a wrong URL shows in the message; Err is
// the last underlying error.
type TransportError struct {
	Method, Path string
	Host         string // host:port of the service
	Err          error
}

func (e *TransportError) Error() string {
	err := e.Err
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL is Host and Path already
	}
	return fmt.Sprintf("baton: %s %s: %s: %v", e.Method, e.Path, e.Host, err)
}
func (e *TransportError) Unwrap() error { return e.Err }

// LockLostError reports that a holder lost its lock. Matches ErrLockLost. Who decided matters
// when reading a log: the service said so, or the client gave up on its own clock.
type LockLostError struct {
	Lcid string
	// ByClient: the client decided, no answer of the service did. Its own lease deadline
	// (the send time of its last renewal + the lease, on its monotonic clock) passed with no
	// heartbeat renewing it: Redis stalled, the network or the service was down. Cause is
	// then the last heartbeat failure, if any, and is not unwrapped: no HTTP status belongs to
	// this error. False: the service answered 409 LOCK_LOST, and Cause is that *ProblemError
	// (errors.As finds it).
	ByClient bool
	Cause    error
}

func (e *LockLostError) Error() string {
	if !e.ByClient {
		var p *ProblemError
		if errors.As(e.Cause, &p) {
			s := fmt.Sprintf("baton: lock lost on %s: the service answered %d %s", e.Lcid, p.Status, p.Code)
			if p.Detail != "" {
				s += ": " + p.Detail
			}
			return s
		}
		return fmt.Sprintf("baton: lock lost on %s: the service answered %v", e.Lcid, e.Cause)
	}
	s := fmt.Sprintf("baton: lock lost on %s: detected by the client: its lease deadline passed with no renewal "+
		"(no answer of the service said so)", e.Lcid)
	if e.Cause != nil {
		s += "; last heartbeat: " + e.Cause.Error()
	}
	return s
}
func (e *LockLostError) Is(target error) bool { return target == ErrLockLost }

// Unwrap gives the service's LOCK_LOST problem; nothing for a loss the client detected.
func (e *LockLostError) Unwrap() error {
	if e.ByClient {
		return nil
	}
	return e.Cause
}

// serviceLockLost is the LockLostError of a call the service answered LOCK_LOST.
func serviceLockLost(lcid string, problem error) *LockLostError {
	return &LockLostError{Lcid: lcid, Cause: problem}
}

// HandlerError wraps the error (or panic) of a handler; the request was aborted with
// requeue so that the service counts the attempt. Unwrap gives the handler's own error.
type HandlerError struct {
	Lcid       string
	RequestIDs []string
	Err        error
}

func (e *HandlerError) Error() string {
	return fmt.Sprintf("baton: handler failed on %s %v: %v", e.Lcid, e.RequestIDs, e.Err)
}
func (e *HandlerError) Unwrap() error { return e.Err }

// TimeoutError is the error of AwaitTurn, AwaitResult and LockAll when their timeout passed.
type TimeoutError struct {
	Op, Lcid, RequestID string
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("baton: %s timed out on %s/%s", e.Op, e.Lcid, e.RequestID)
}
func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

// ConfigError reports Options a client cannot work with: APIKey and TokenFile both set, or a
// TokenFile that could not be read at New or was empty. New cannot return an error, so every
// call returns this one; Client.Err gives it right after New. It never holds a token.
type ConfigError struct {
	Reason string
	Err    error // the token file's read error, naming its path
}

func (e *ConfigError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("baton: invalid options: %s: %v", e.Reason, e.Err)
	}
	return "baton: invalid options: " + e.Reason
}
func (e *ConfigError) Unwrap() error { return e.Err }
