package baton

import (
	"fmt"
	"log"
	"os"
	"strings"
	"sync"
	"time"
)

// bearer produces the Authorization header of every attempt: the API key, or the token of
// TokenFile. A workload token (a Kubernetes projected service-account token) expires, and the
// kubelet replaces its file before that, so the file is read again rather than once.
type bearer struct {
	key     string
	path    string
	refresh time.Duration // negative: read before every attempt
	log     *log.Logger

	mu      sync.Mutex
	token   string
	readAt  time.Time
	failing bool // a failed re-read was reported; the next good read clears it
}

func newBearer(opts Options, lg *log.Logger) (*bearer, error) {
	b := &bearer{key: opts.APIKey, path: opts.TokenFile, refresh: opts.TokenRefresh, log: lg}
	if b.path == "" {
		return b, nil
	}
	if b.key != "" {
		return b, &ConfigError{Reason: "Options.APIKey and Options.TokenFile are exclusive: set one of them"}
	}
	t, err := readToken(b.path)
	if err != nil {
		return b, &ConfigError{Reason: "reading Options.TokenFile", Err: err}
	}
	b.token, b.readAt = t, time.Now()
	return b, nil
}

// readToken's errors name the path, never the content.
func readToken(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	t := strings.TrimSpace(string(data))
	if t == "" {
		return "", fmt.Errorf("token file %s is empty", path)
	}
	return t, nil
}

// header is the Authorization value of the next attempt ("" for none). force reads the file
// whatever the age of the last read.
func (b *bearer) header(force bool) string {
	if b.path == "" {
		if b.key == "" {
			return ""
		}
		return "Bearer " + b.key
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if force || b.refresh < 0 || time.Since(b.readAt) >= b.refresh {
		if t, err := readToken(b.path); err != nil {
			// The file is briefly missing while the kubelet swaps it; the last token is likely
			// still valid, and a 401 forces another read anyway.
			if !b.failing {
				b.failing = true
				b.log.Printf("baton: re-reading the token file failed, sending the last token: %v", err)
			}
		} else {
			b.token, b.readAt, b.failing = t, time.Now(), false
		}
	}
	return "Bearer " + b.token
}

// renewed reads the token file again after a 401 and reports whether its token differs from
// sent, the header of the refused attempt. Always false with an API key: it cannot change.
func (b *bearer) renewed(sent string) bool {
	return b.path != "" && b.header(true) != sent
}
