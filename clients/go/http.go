package baton

// The transport: one HTTP attempt with its headers and authentication, and what its answer is
// (a body, a problem, an unexpected answer, a transport error). It knows nothing of retries or
// of the calls; auth.go (the bearer and the token file) and tracing.go belong to this part.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Version is the client version: the protocol version it speaks.
const Version = "1.2.0-SNAPSHOT"

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
	// poller errors) and the warnings: a call still retrying after its third failed attempt, a
	// lost lock, a wait whose lcid nobody holds. Default: the standard logger. Use
	// log.New(io.Discard, "", 0) to silence.
	Logger *log.Logger
	// Tracing hooks the application's tracer in: the trace context sent with a new request,
	// and the span the holder runs the handler in. Zero: no tracing (see Tracing).
	Tracing Tracing
}

// transport sends single attempts to one service.
type transport struct {
	base     string
	hostPort string // the service's host:port, named by transport errors and retry warnings
	opts     Options
	http     *http.Client
	log      *log.Logger
	auth     *bearer
	err      error // a *ConfigError returned by every call
}

// newTransport applies the defaults of opts.
func newTransport(baseURL string, opts Options) *transport {
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
	base := strings.TrimRight(baseURL, "/")
	t := &transport{base: base, hostPort: hostPort(base), opts: opts, http: hc, log: lg}
	t.auth, t.err = newBearer(opts, lg)
	return t
}

// hostPort is the host:port of a base URL, the port filled in from the scheme.
func hostPort(base string) string {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return base
	}
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// once is one attempt: the answer on 2xx, else a *ProblemError, *UnexpectedResponseError or
// *TransportError. timeout bounds the attempt.
func (t *transport) once(ctx context.Context, method, path string, payload []byte, auth string, header map[string]string,
	timeout time.Duration) (int, []byte, error) {
	if timeout <= 0 {
		return 0, nil, &TransportError{Method: method, Path: path, Host: t.hostPort, Err: context.DeadlineExceeded}
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(actx, method, t.base+path, rd)
	if err != nil {
		return 0, nil, &ConfigError{Reason: "building " + method + " " + path, Err: err}
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
	resp, err := t.http.Do(req)
	if err != nil {
		return 0, nil, &TransportError{Method: method, Path: path, Host: t.hostPort, Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return 0, nil, &TransportError{Method: method, Path: path, Host: t.hostPort, Err: err}
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
