//go:build !unix

package process

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Where processes cannot be run, every entry point says so (and names the system) instead of
// failing obscurely or doing nothing.
func TestUnsupportedPlatform(t *testing.T) {
	s := New(Options{})
	defer s.Shutdown(context.Background())
	if _, err := s.Start(context.Background(), StartOptions{Command: "cmd"}); !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "not supported on") {
		t.Fatalf("Start: %v, want a not-supported error", err)
	}
	if _, err := s.Exec(context.Background(), ExecOptions{Command: "cmd"}); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Exec: %v, want a not-supported error", err)
	}
	if list := s.List(false); len(list) != 0 {
		t.Fatalf("a refused start left records: %v", list)
	}
}
