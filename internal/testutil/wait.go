package testutil

import (
	"os"
	"strings"
	"testing"
	"time"
)

// Patience is how long a test waits for something that is meant to happen (an event, a process
// starting, a file appearing) before it fails. It is not a performance promise: on a loaded
// machine things are slow, and a wait that ends on its condition costs nothing when they are not.
const Patience = 10 * time.Second

// Eventually waits until cond holds, checking it again and again (at first every millisecond,
// backing off to every 50 ms), and fails the test with what after Patience. It is for state that
// has no event to wait on; where the code under test signals (a channel, a callback, a line of
// output), wait on that instead.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	EventuallyWithin(t, Patience, what, cond)
}

// EventuallyWithin is Eventually with its own limit, for waits that take long by nature (a
// browser or a Node server starting, a restart back-off).
func EventuallyWithin(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(limit, cond) {
		t.Fatalf("timed out after %s waiting for %s", limit, what)
	}
}

// Poll waits until cond holds or limit passes and reports whether it held, for a caller that
// wants to say more than Eventually does when it did not (the last state it saw).
func Poll(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	pause := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		timer := time.NewTimer(pause)
		<-timer.C
		pause = min(2*pause, 50*time.Millisecond)
	}
	return true
}

// Receive waits for a value on ch and returns it, failing the test with what after Patience (or
// if ch is closed).
func Receive[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(Patience)
	defer timer.Stop()
	select {
	case v, ok := <-ch:
		if !ok {
			t.Fatalf("closed while waiting for %s", what)
		}
		return v
	case <-timer.C:
		t.Fatalf("timed out after %s waiting for %s", Patience, what)
	}
	var zero T
	return zero
}

// RequireBrowser returns the Chromium the browser tests drive, found by find (webview.FindBrowser,
// passed in so this package does not import the package under test) from SWITCHBOARD_BROWSER. It
// skips the test without one, except under CI=true, where a missing browser is a broken setup.
func RequireBrowser(t testing.TB, find func(configured string) (string, error)) string {
	t.Helper()
	path, err := find(os.Getenv("SWITCHBOARD_BROWSER"))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but no browser: %v (build/setup-deps.sh installs chromium)", err)
		}
		t.Skipf("no browser: %v", err)
	}
	return path
}

// RequireLandlock skips a test of the sandbox on a kernel without Landlock (abi is
// sandbox.ABI(), passed in so this package does not import the package under test), except under
// CI=true, where CI must test the sandbox.
func RequireLandlock(t testing.TB, abi int) {
	t.Helper()
	if abi > 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI=true but this kernel has no Landlock: the sandbox tests need Linux 5.13 or later with landlock in the lsm= list")
	}
	t.Skip("no Landlock on this kernel")
}

// SnapshotRef returns the ref of the first element described as prefix (e.g. `button "Send"`) in
// an accessibility snapshot (webview_snapshot's text, where it reads `button "Send" [ref=e3]`).
func SnapshotRef(t testing.TB, snap, prefix string) string {
	t.Helper()
	for line := range strings.SplitSeq(snap, "\n") {
		if i := strings.Index(line, prefix+" [ref="); i >= 0 {
			rest := line[i+len(prefix)+len(" [ref="):]
			if j := strings.IndexByte(rest, ']'); j >= 0 {
				return rest[:j]
			}
		}
	}
	t.Fatalf("no %q with a ref in the snapshot:\n%s", prefix, snap)
	return ""
}
